/* ESP's combined-mode AEADs over OpenSSL's libcrypto, one packet or a run of them per call.
 *
 * The CPython extension behind cryptoapi.providers.libcrypto: RFC 4106 (AES-GCM) and
 * RFC 7634 (ChaCha20-Poly1305) as ESP uses them, the nonce the key's 4-byte salt followed
 * by the packet's 8-byte IV (RFC 4106 §4, RFC 7634 §2).
 *
 *   Key(cipher, key, salt, taglen)     one SA's key: an EVP context each way, keyed once
 *   Key.seal(iv, plaintext, aad)       ciphertext || ICV
 *   Key.open(iv, data, aad)            the plaintext, or Forged (no plaintext is released)
 *   Key.bind(spi, esn, align)          the SA (its SPI, ESN, padding) the runs frame
 *   Key.seal_run(...)                  the ESP packets (RFC 4303 §3.3) of a run of inner
 *                                      packets of one flow, in their outer header if given
 *   Key.open_run(...)                  the payloads of a run of inbound ESP packets of the
 *                                      SA whose sequence numbers follow the window's top
 *                                      (§3.4), stopping at the first it cannot take
 *
 * seal and open are what the self-test manager checks against the published vectors; the
 * runs frame packets around the same two functions (aead_seal, aead_open), and the ESP
 * data path's readable code is their reference (tests/esp/test_fastpath.py).
 *
 * The GIL is held throughout: a Key's contexts are used by one call at a time.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include <openssl/evp.h>

#define SALT 4          /* RFC 4106 §4, RFC 7634 §2 */
#define IV 8            /* RFC 4106 §3.1, RFC 7634 §2 */
#define NONCE (SALT + IV)
#define ESP_HEADER 8    /* RFC 4303 §2: SPI || sequence number */
#define IPV4 20
#define UDP 8
#define MAX_ICV 16
#define MAX_RUN_PACKET 0x10000 /* longer ESP packets (never from UDP) end a run */
#define IPPROTO_IPIP 4  /* the trailer's next header: an inner IPv4 packet (tunnel mode) */
#define IPPROTO_IPV6 41 /* ... or an inner IPv6 one */

/* Why open_run stopped at a packet it did not take: the index into the caller's causes. */
enum { TAKEN_ALL = 0, BAD_LENGTH = 1, FORGED = 2, BAD_PADDING = 3 };

static PyObject *Forged;

typedef struct {
    PyObject_HEAD
    EVP_CIPHER_CTX *enc;
    EVP_CIPHER_CTX *dec;
    unsigned char salt[SALT];
    int taglen;
    unsigned char spi[4]; /* the SA's, bound by bind() for the runs */
    int esn;
    int align;
} Key;

static void put16(unsigned char *at, unsigned value) {
    at[0] = (unsigned char)(value >> 8);
    at[1] = (unsigned char)value;
}

static void put32(unsigned char *at, uint32_t value) {
    put16(at, value >> 16);
    put16(at + 2, value & 0xFFFF);
}

static void put64(unsigned char *at, uint64_t value) {
    put32(at, (uint32_t)(value >> 32));
    put32(at + 4, (uint32_t)value);
}

static uint32_t get32(const unsigned char *at) {
    return (uint32_t)at[0] << 24 | (uint32_t)at[1] << 16 | (uint32_t)at[2] << 8 | at[3];
}

/* The ESP AAD (RFC 4303 §2.2.1, RFC 4106 §5): SPI || low bits, or SPI || high || low. */
static int esp_aad(unsigned char *aad, const unsigned char *spi, uint64_t seq, int esn) {
    memcpy(aad, spi, 4);
    if (!esn) {
        put32(aad + 4, (uint32_t)seq);
        return 8;
    }
    put64(aad + 4, seq);
    return 12;
}

/* ciphertext || ICV of (part || tail) under nonce: both parts through one AEAD message. */
static int aead_seal(Key *key, const unsigned char *nonce, const unsigned char *aad, int aadlen,
                     const unsigned char *part, int partlen, const unsigned char *tail,
                     int taillen, unsigned char *out) {
    EVP_CIPHER_CTX *ctx = key->enc;
    int n = 0, done = 0;
    if (EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, nonce) != 1 ||
        EVP_EncryptUpdate(ctx, NULL, &n, aad, aadlen) != 1 ||
        EVP_EncryptUpdate(ctx, out, &n, part, partlen) != 1)
        return -1;
    done = n;
    if (taillen && EVP_EncryptUpdate(ctx, out + done, &n, tail, taillen) != 1)
        return -1;
    done += taillen ? n : 0;
    if (EVP_EncryptFinal_ex(ctx, out + done, &n) != 1)
        return -1;
    done += n;
    if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, key->taglen, out + done) != 1)
        return -1;
    return done + key->taglen;
}

/* 1 and the plaintext in out if data (ciphertext || ICV) verifies, 0 if it does not (out
 * is then cleared), -1 on a library failure. */
static int aead_open(Key *key, const unsigned char *nonce, const unsigned char *aad, int aadlen,
                     const unsigned char *data, int datalen, unsigned char *out) {
    EVP_CIPHER_CTX *ctx = key->dec;
    int textlen = datalen - key->taglen, n = 0, last = 0;
    unsigned char tag[MAX_ICV];
    memcpy(tag, data + textlen, key->taglen);
    if (EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, nonce) != 1 ||
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, key->taglen, tag) != 1 ||
        EVP_DecryptUpdate(ctx, NULL, &n, aad, aadlen) != 1 ||
        EVP_DecryptUpdate(ctx, out, &n, data, textlen) != 1)
        return -1;
    if (EVP_DecryptFinal_ex(ctx, out + n, &last) != 1) {
        OPENSSL_cleanse(out, textlen);
        return 0;
    }
    return 1;
}

static PyObject *library_error(void) {
    PyErr_SetString(PyExc_RuntimeError, "libcrypto failed an AEAD operation");
    return NULL;
}

static void key_dealloc(Key *self) {
    EVP_CIPHER_CTX_free(self->enc);
    EVP_CIPHER_CTX_free(self->dec);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int key_init(Key *self, PyObject *args, PyObject *kwds) {
    const char *cipher_name;
    Py_buffer key, salt;
    int taglen;
    if (kwds && PyDict_Size(kwds)) {
        PyErr_SetString(PyExc_TypeError, "Key takes positional arguments only");
        return -1;
    }
    if (!PyArg_ParseTuple(args, "sy*y*i", &cipher_name, &key, &salt, &taglen))
        return -1;
    int ok = -1;
    EVP_CIPHER *cipher = EVP_CIPHER_fetch(NULL, cipher_name, NULL);
    if (salt.len != SALT || taglen < 4 || taglen > MAX_ICV) {
        PyErr_SetString(PyExc_ValueError, "Key: a 4-byte salt and an ICV of 4 to 16 bytes");
    } else if (cipher == NULL || EVP_CIPHER_get_key_length(cipher) != key.len ||
               EVP_CIPHER_get_iv_length(cipher) != NONCE) {
        PyErr_Format(PyExc_ValueError, "Key: no %zd-byte key AEAD named %s", key.len, cipher_name);
    } else {
        EVP_CIPHER_CTX_free(self->enc);
        EVP_CIPHER_CTX_free(self->dec);
        self->enc = EVP_CIPHER_CTX_new();
        self->dec = EVP_CIPHER_CTX_new();
        if (self->enc && self->dec &&
            EVP_EncryptInit_ex(self->enc, cipher, NULL, key.buf, NULL) == 1 &&
            EVP_DecryptInit_ex(self->dec, cipher, NULL, key.buf, NULL) == 1) {
            memcpy(self->salt, salt.buf, SALT);
            self->taglen = taglen;
            ok = 0;
        } else {
            library_error();
        }
    }
    EVP_CIPHER_free(cipher);
    PyBuffer_Release(&key);
    PyBuffer_Release(&salt);
    return ok;
}

static int ready(Key *self) {
    if (self->enc == NULL) {
        PyErr_SetString(PyExc_ValueError, "Key: not initialized");
        return 0;
    }
    return 1;
}

/* The bytes argument args[at], or NULL with TypeError. */
static PyObject *bytes_arg(PyObject *const *args, Py_ssize_t at, const char *what) {
    if (!PyBytes_Check(args[at])) {
        PyErr_Format(PyExc_TypeError, "%s must be bytes", what);
        return NULL;
    }
    return args[at];
}

static int check_args(Py_ssize_t nargs, Py_ssize_t wanted, const char *method) {
    if (nargs != wanted) {
        PyErr_Format(PyExc_TypeError, "%s takes %zd arguments (%zd given)", method, wanted, nargs);
        return 0;
    }
    return 1;
}

/* (iv, text, aad) of a one-packet call, the nonce made; 0 with an exception if malformed. */
static int one_packet(Key *self, PyObject *const *args, Py_ssize_t nargs, const char *method,
                      unsigned char *nonce, PyObject **text, PyObject **aad) {
    PyObject *iv;
    if (!ready(self) || !check_args(nargs, 3, method) || !(iv = bytes_arg(args, 0, "iv")) ||
        !(*text = bytes_arg(args, 1, "data")) || !(*aad = bytes_arg(args, 2, "aad")))
        return 0;
    if (PyBytes_GET_SIZE(iv) != IV || PyBytes_GET_SIZE(*text) > INT_MAX - MAX_ICV ||
        PyBytes_GET_SIZE(*aad) > INT_MAX) {
        PyErr_SetString(PyExc_ValueError, "an 8-byte IV and data under 2 GiB");
        return 0;
    }
    memcpy(nonce, self->salt, SALT);
    memcpy(nonce + SALT, PyBytes_AS_STRING(iv), IV);
    return 1;
}

static PyObject *key_seal(Key *self, PyObject *const *args, Py_ssize_t nargs) {
    unsigned char nonce[NONCE];
    PyObject *text, *aad;
    if (!one_packet(self, args, nargs, "seal", nonce, &text, &aad))
        return NULL;
    Py_ssize_t size = PyBytes_GET_SIZE(text);
    PyObject *out = PyBytes_FromStringAndSize(NULL, size + self->taglen);
    if (out == NULL)
        return NULL;
    if (aead_seal(self, nonce, (unsigned char *)PyBytes_AS_STRING(aad), (int)PyBytes_GET_SIZE(aad),
                  (unsigned char *)PyBytes_AS_STRING(text), (int)size, NULL, 0,
                  (unsigned char *)PyBytes_AS_STRING(out)) < 0) {
        Py_DECREF(out);
        return library_error();
    }
    return out;
}

static PyObject *key_open(Key *self, PyObject *const *args, Py_ssize_t nargs) {
    unsigned char nonce[NONCE];
    PyObject *data, *aad;
    if (!one_packet(self, args, nargs, "open", nonce, &data, &aad))
        return NULL;
    Py_ssize_t size = PyBytes_GET_SIZE(data);
    if (size < self->taglen) {
        PyErr_SetString(Forged, "the data cannot hold the ICV");
        return NULL;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, size - self->taglen);
    if (out == NULL)
        return NULL;
    int verified = aead_open(self, nonce, (unsigned char *)PyBytes_AS_STRING(aad),
                             (int)PyBytes_GET_SIZE(aad), (unsigned char *)PyBytes_AS_STRING(data),
                             (int)size, (unsigned char *)PyBytes_AS_STRING(out));
    if (verified == 1)
        return out;
    Py_DECREF(out);
    if (verified == 0) {
        PyErr_SetString(Forged, "the ICV does not verify");
        return NULL;
    }
    return library_error();
}

static int as_u64(PyObject *number, uint64_t *value) {
    *value = PyLong_AsUnsignedLongLong(number);
    return !(*value == (uint64_t)-1 && PyErr_Occurred());
}

static int as_size(PyObject *number, Py_ssize_t *value) {
    *value = PyLong_AsSsize_t(number);
    return !(*value == -1 && PyErr_Occurred());
}

/* The outer IPv4 (and UDP) header of one packet (RFC 791 §3.1, RFC 768, RFC 3948 §2.1):
 * template with its total length, identification and checksum (RFC 1071; ``words`` is the
 * sum of every other 16-bit word) filled in; the UDP checksum stays zero. */
static void outer_header(unsigned char *at, const unsigned char *template, Py_ssize_t headlen,
                         uint64_t words, unsigned total, unsigned ident) {
    memcpy(at, template, headlen);
    put16(at + 2, total);
    put16(at + 4, ident);
    words += total + ident;
    words = (words & 0xFFFF) + (words >> 16);
    words = (words & 0xFFFF) + (words >> 16);
    put16(at + 10, 0xFFFF - (unsigned)words);
    if (headlen == IPV4 + UDP)
        put16(at + IPV4 + 4, total - IPV4);
}

/* The 16-bit one's-complement sum of a header template's words (RFC 1071). */
static uint64_t word_sum(const unsigned char *at, Py_ssize_t size) {
    uint64_t sum = 0;
    for (Py_ssize_t k = 0; k + 1 < size; k += 2)
        sum += (uint64_t)at[k] << 8 | at[k + 1];
    return sum;
}

static int bound(Key *self) {
    if (!ready(self))
        return 0;
    if (self->align == 0) {
        PyErr_SetString(PyExc_ValueError, "Key: bind(spi, esn, align) comes before a run");
        return 0;
    }
    return 1;
}

/* bind(spi, esn, align): the SA whose packets the runs frame. */
static PyObject *key_bind(Key *self, PyObject *const *args, Py_ssize_t nargs) {
    PyObject *spi;
    Py_ssize_t align;
    int esn;
    if (!ready(self) || !check_args(nargs, 3, "bind") || !(spi = bytes_arg(args, 0, "spi")) ||
        (esn = PyObject_IsTrue(args[1])) < 0 || !as_size(args[2], &align))
        return NULL;
    if (PyBytes_GET_SIZE(spi) != 4 || align < 1 || align > 255) {
        PyErr_SetString(PyExc_ValueError, "bind: a 4-byte SPI and an alignment of 1 to 255");
        return NULL;
    }
    memcpy(self->spi, PyBytes_AS_STRING(spi), 4);
    self->esn = esn;
    self->align = (int)align;
    Py_RETURN_NONE;
}

/* seal_run's work, over packets as a list or a tuple. */
static PyObject *seal_packets(Key *self, PyObject *packets, uint64_t seq, uint64_t iv_salt,
                              PyObject *header, uint64_t ident) {
    Py_ssize_t headlen = PyBytes_GET_SIZE(header), count = PySequence_Fast_GET_SIZE(packets);
    if (headlen != 0 && headlen != IPV4 && headlen != IPV4 + UDP) {
        PyErr_SetString(PyExc_ValueError, "seal_run: the header is IPv4, IPv4 and UDP, or none");
        return NULL;
    }
    PyObject *out = PyList_New(count);
    if (out == NULL)
        return NULL;
    const unsigned char *template = (unsigned char *)PyBytes_AS_STRING(header);
    uint64_t words = word_sum(template, headlen < IPV4 ? headlen : IPV4);
    int align = self->align;
    for (Py_ssize_t i = 0; i < count; i++, seq++, ident++) {
        PyObject *packet = PySequence_Fast_ITEMS(packets)[i];
        if (!PyBytes_Check(packet) || PyBytes_GET_SIZE(packet) < 1 ||
            PyBytes_GET_SIZE(packet) > 0xFFFF) {
            PyErr_SetString(PyExc_ValueError, "seal_run: packets are bytes of 1 to 65535");
            Py_DECREF(out);
            return NULL;
        }
        const unsigned char *inner = (unsigned char *)PyBytes_AS_STRING(packet);
        Py_ssize_t size = PyBytes_GET_SIZE(packet);
        unsigned char trailer[257], nonce[NONCE], aad[12];
        int pad = (int)((align - (size + 2) % align) % align);
        for (int k = 0; k < pad; k++)
            trailer[k] = (unsigned char)(k + 1);
        trailer[pad] = (unsigned char)pad;
        trailer[pad + 1] = inner[0] >> 4 == 4 ? IPPROTO_IPIP : IPPROTO_IPV6;
        Py_ssize_t esplen = ESP_HEADER + IV + size + pad + 2 + self->taglen;
        if (headlen && headlen + esplen > 0xFFFF) {
            PyErr_SetString(PyExc_ValueError, "seal_run: a packet too long for its outer header");
            Py_DECREF(out);
            return NULL;
        }
        PyObject *esp = PyBytes_FromStringAndSize(NULL, headlen + esplen);
        if (esp == NULL) {
            Py_DECREF(out);
            return NULL;
        }
        unsigned char *at = (unsigned char *)PyBytes_AS_STRING(esp);
        if (headlen)
            outer_header(at, template, headlen, words, (unsigned)(headlen + esplen),
                         (unsigned)(ident & 0xFFFF));
        at += headlen;
        memcpy(at, self->spi, 4);
        put32(at + 4, (uint32_t)seq);
        put64(at + ESP_HEADER, seq ^ iv_salt);
        memcpy(nonce, self->salt, SALT);
        memcpy(nonce + SALT, at + ESP_HEADER, IV);
        int aadlen = esp_aad(aad, self->spi, seq, self->esn);
        if (aead_seal(self, nonce, aad, aadlen, inner, (int)size, trailer, pad + 2,
                      at + ESP_HEADER + IV) < 0) {
            Py_DECREF(esp);
            Py_DECREF(out);
            return library_error();
        }
        PyList_SET_ITEM(out, i, esp);
    }
    return out;
}

/* seal_run(packets, seq, iv_salt, header, ident) -> list of bytes
 * packets (inner packets of one flow) as the bound SA's ESP packets numbered from seq,
 * each IV seq ^ iv_salt (RFC 4106 §3.1 and RFC 7634 §2 ask only that it be unique under
 * the key; the readable path makes the same one), padded to the alignment with the
 * trailer's next header by the IP version (§2.4); behind a copy of header (an outer IPv4,
 * or IPv4 and UDP, header with length, identification and checksums zero) unless it is
 * empty, its identification from ident on. */
static PyObject *key_seal_run(Key *self, PyObject *const *args, Py_ssize_t nargs) {
    uint64_t seq, iv_salt, ident;
    PyObject *packets, *header, *out;
    if (!bound(self) || !check_args(nargs, 5, "seal_run") || !as_u64(args[1], &seq) ||
        !as_u64(args[2], &iv_salt) || !(header = bytes_arg(args, 3, "header")) ||
        !as_u64(args[4], &ident) || !(packets = PySequence_Fast(args[0], "packets: a sequence")))
        return NULL;
    out = seal_packets(self, packets, seq, iv_salt, header, ident);
    Py_DECREF(packets);
    return out;
}

/* Whether the padding before the trailer is §2.4's 1, 2, 3, ... */
static int padding_ok(const unsigned char *plain, Py_ssize_t size) {
    int pad = plain[size - 2];
    if (pad + 2 > size)
        return 0;
    for (int k = 0; k < pad; k++)
        if (plain[size - 2 - pad + k] != k + 1)
            return 0;
    return 1;
}

/* One packet of open_run: its cause (TAKEN_ALL if opened), the payload and next header. */
static int open_one(Key *self, PyObject *esp, uint64_t seq, PyObject **payload,
                    int *next_header) {
    const unsigned char *at = (unsigned char *)PyBytes_AS_STRING(esp);
    Py_ssize_t body = PyBytes_GET_SIZE(esp) - ESP_HEADER - IV - self->taglen;
    unsigned char nonce[NONCE], aad[12], *plain;
    if (body < 2 || body % self->align)
        return BAD_LENGTH;
    memcpy(nonce, self->salt, SALT);
    memcpy(nonce + SALT, at + ESP_HEADER, IV);
    int aadlen = esp_aad(aad, self->spi, seq, self->esn);
    PyObject *opened = PyBytes_FromStringAndSize(NULL, body);
    if (opened == NULL)
        return -1;
    plain = (unsigned char *)PyBytes_AS_STRING(opened);
    int verified = aead_open(self, nonce, aad, aadlen, at + ESP_HEADER + IV,
                             (int)(body + self->taglen), plain);
    if (verified != 1 || !padding_ok(plain, body)) {
        Py_DECREF(opened);
        if (verified < 0) {
            library_error();
            return -1;
        }
        return verified ? BAD_PADDING : FORGED;
    }
    *next_header = plain[body - 1];
    if (_PyBytes_Resize(&opened, body - 2 - plain[body - 2]) < 0)
        return -1;
    *payload = opened;
    return TAKEN_ALL;
}

/* open_run's work, over payloads as a list or a tuple. */
static PyObject *open_payloads(Key *self, PyObject *payloads, Py_ssize_t start, uint64_t seq,
                               double packets, double octets) {
    Py_ssize_t end = PySequence_Fast_GET_SIZE(payloads);
    if (start < 0 || start > end) {
        PyErr_SetString(PyExc_ValueError, "open_run: start is outside the payloads");
        return NULL;
    }
    PyObject **items = PySequence_Fast_ITEMS(payloads);
    PyObject *opened = PyList_New(0);
    PyObject *next_headers = PyBytes_FromStringAndSize(NULL, end - start);
    if (opened == NULL || next_headers == NULL)
        goto fail;
    unsigned char *headers = (unsigned char *)PyBytes_AS_STRING(next_headers);
    Py_ssize_t taken = 0;
    double nbytes = 0;
    int cause = TAKEN_ALL;
    for (Py_ssize_t i = start; i < end; i++, seq++) {
        PyObject *esp = items[i];
        if (!PyBytes_Check(esp) || PyBytes_GET_SIZE(esp) < ESP_HEADER ||
            PyBytes_GET_SIZE(esp) > MAX_RUN_PACKET ||
            memcmp(PyBytes_AS_STRING(esp), self->spi, 4) != 0 || taken >= packets ||
            nbytes + (double)PyBytes_GET_SIZE(esp) >= octets ||
            (!self->esn && seq > 0xFFFFFFFF) ||
            get32((unsigned char *)PyBytes_AS_STRING(esp) + 4) != (uint32_t)seq)
            break;
        PyObject *payload = NULL;
        int next_header = 0;
        cause = open_one(self, esp, seq, &payload, &next_header);
        if (cause < 0)
            goto fail;
        if (cause != TAKEN_ALL)
            break;
        if (PyList_Append(opened, payload) < 0) {
            Py_DECREF(payload);
            goto fail;
        }
        Py_DECREF(payload);
        headers[taken++] = (unsigned char)next_header;
        nbytes += (double)PyBytes_GET_SIZE(payload);
    }
    if (_PyBytes_Resize(&next_headers, taken) < 0)
        goto fail;
    return Py_BuildValue("(NNi)", opened, next_headers, cause);
fail:
    Py_XDECREF(opened);
    Py_XDECREF(next_headers);
    return NULL;
}

/* open_run(payloads, start, seq, packets, octets) -> (payloads opened, next headers, cause)
 * The bound SA's ESP packets payloads[start:], as long as each carries the next sequence
 * number from seq on (above the window's top, so new: §3.4.3), at most ``packets`` of
 * them, whose ESP lengths stay below ``octets`` in all (the SA's lifetime room). Checked
 * in §3.4's order: length, ICV, padding. The run stops before a packet it does not take
 * (cause TAKEN_ALL: the caller looks at it) or at a packet §3.4 rejects (cause
 * BAD_LENGTH, FORGED or BAD_PADDING: dropped, not to be opened again). */
static PyObject *key_open_run(Key *self, PyObject *const *args, Py_ssize_t nargs) {
    Py_ssize_t start;
    uint64_t seq;
    PyObject *payloads, *out;
    double packets, octets;
    if (!bound(self) || !check_args(nargs, 5, "open_run") || !as_size(args[1], &start) ||
        !as_u64(args[2], &seq) ||
        ((packets = PyFloat_AsDouble(args[3])) == -1.0 && PyErr_Occurred()) ||
        ((octets = PyFloat_AsDouble(args[4])) == -1.0 && PyErr_Occurred()) ||
        !(payloads = PySequence_Fast(args[0], "payloads: a sequence")))
        return NULL;
    out = open_payloads(self, payloads, start, seq, packets, octets);
    Py_DECREF(payloads);
    return out;
}

static PyMethodDef key_methods[] = {
    {"seal", (PyCFunction)(void (*)(void))key_seal, METH_FASTCALL,
     "seal(iv, plaintext, aad) -> ciphertext || ICV"},
    {"open", (PyCFunction)(void (*)(void))key_open, METH_FASTCALL,
     "open(iv, data, aad) -> plaintext, or Forged"},
    {"bind", (PyCFunction)(void (*)(void))key_bind, METH_FASTCALL,
     "bind(spi, esn, align): the SA whose packets the runs frame"},
    {"seal_run", (PyCFunction)(void (*)(void))key_seal_run, METH_FASTCALL,
     "seal_run(packets, seq, iv_salt, header, ident) -> ESP packets"},
    {"open_run", (PyCFunction)(void (*)(void))key_open_run, METH_FASTCALL,
     "open_run(payloads, start, seq, packets, octets) -> (payloads, next headers, cause)"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject KeyType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "_esp_batch.Key",
    .tp_basicsize = sizeof(Key),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Key(cipher, key, salt, taglen): one ESP SA's AEAD key",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)key_init,
    .tp_dealloc = (destructor)key_dealloc,
    .tp_methods = key_methods,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_esp_batch", "ESP's AEADs over libcrypto, by packet or by run.", -1,
    NULL, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__esp_batch(void) {
    if (PyType_Ready(&KeyType) < 0)
        return NULL;
    PyObject *made = PyModule_Create(&module);
    if (made == NULL)
        return NULL;
    Forged = PyErr_NewException("_esp_batch.Forged", NULL, NULL);
    if (Forged == NULL || PyModule_AddObjectRef(made, "Forged", Forged) < 0 ||
        PyModule_AddObjectRef(made, "Key", (PyObject *)&KeyType) < 0) {
        Py_DECREF(made);
        return NULL;
    }
    return made;
}
