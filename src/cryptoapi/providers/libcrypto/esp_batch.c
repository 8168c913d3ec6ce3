/* ESP's ciphers over OpenSSL's libcrypto, one packet or a run of them per call.
 *
 * The CPython extension behind cryptoapi.providers.libcrypto: RFC 4106 (AES-GCM) and
 * RFC 7634 (ChaCha20-Poly1305) as ESP uses them, the nonce the key's 4-byte salt followed
 * by the packet's 8-byte IV (RFC 4106 §4, RFC 7634 §2); and encrypt-then-MAC, AES-CBC with
 * HMAC (RFC 3602, RFC 4868), as the authenc template composes it: the ICV over the ESP
 * header || IV || ciphertext (RFC 4303 §3.3.2), and with extended sequence numbers their
 * high 32 bits after those (§2.2.1, the kernel's authencesn).
 *
 *   Key(cipher, key, salt, taglen)     one SA's AEAD key: an EVP context each way, keyed once
 *   EtmKey(cipher, key, digest, authkey, taglen)
 *                                      one SA's encrypt-then-MAC keys: the cipher's contexts
 *                                      and one HMAC context, keyed once
 *   Key.seal(iv, plaintext, aad)       ciphertext || ICV (EtmKey: the ICV over aad || iv ||
 *                                      ciphertext, whole blocks in)
 *   Key.open(iv, data, aad)            the plaintext, or Forged (no plaintext is released)
 *   Key.bind(spi, esn, align)          the SA (its SPI, ESN, padding) the runs frame
 *   Key.seal_run(...)                  the ESP packets (RFC 4303 §3.3) of a run of inner
 *                                      packets of one flow, in their outer header if given
 *   Key.open_run(...)                  the payloads of a run of inbound ESP packets of the
 *                                      SA whose sequence numbers follow the window's top
 *                                      (§3.4), stopping at the first it cannot take
 *
 * seal and open are what the self-test manager checks against the published vectors; the
 * runs frame packets around the same functions (aead_seal and aead_open, etm_seal and
 * etm_open), and the ESP data path's readable code is their reference
 * (tests/esp/test_fastpath.py). A CBC run's IVs come from the caller, which draws them from
 * the OS as RFC 3602 §3 asks (unpredictable) and as the readable path does.
 *
 * The GIL is held throughout: a Key's contexts are used by one call at a time.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#define SALT 4          /* RFC 4106 §4, RFC 7634 §2 */
#define IV 8            /* RFC 4106 §3.1, RFC 7634 §2 */
#define NONCE (SALT + IV)
#define ESP_HEADER 8    /* RFC 4303 §2: SPI || sequence number */
#define IPV4 20
#define UDP 8
#define AEAD_MAX_ICV 16
#define MAX_ICV EVP_MAX_MD_SIZE /* an HMAC's whole digest */
#define MAX_BLOCK 16
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
    EVP_MAC_CTX *mac;     /* EtmKey's HMAC, keyed once; NULL for an AEAD's Key */
    unsigned char salt[SALT];
    int ivlen;            /* on the wire: 8 (the AEADs) or the cipher's block (CBC) */
    int block;            /* the length of whole blocks: 1 for the AEADs */
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

/* The ciphertext of (part || tail) into out, from a context already given its IV (and an
 * AEAD's AAD): its length, or -1 on a library failure. */
static int encrypt_parts(EVP_CIPHER_CTX *ctx, const unsigned char *part, int partlen,
                         const unsigned char *tail, int taillen, unsigned char *out) {
    int n = 0, done = 0;
    if (EVP_EncryptUpdate(ctx, out, &n, part, partlen) != 1)
        return -1;
    done = n;
    if (taillen && EVP_EncryptUpdate(ctx, out + done, &n, tail, taillen) != 1)
        return -1;
    done += taillen ? n : 0;
    if (EVP_EncryptFinal_ex(ctx, out + done, &n) != 1)
        return -1;
    return done + n;
}

/* ciphertext || ICV of (part || tail) under nonce: both parts through one AEAD message. */
static int aead_seal(Key *key, const unsigned char *nonce, const unsigned char *aad, int aadlen,
                     const unsigned char *part, int partlen, const unsigned char *tail,
                     int taillen, unsigned char *out) {
    EVP_CIPHER_CTX *ctx = key->enc;
    int n = 0, done;
    if (EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, nonce) != 1 ||
        EVP_EncryptUpdate(ctx, NULL, &n, aad, aadlen) != 1 ||
        (done = encrypt_parts(ctx, part, partlen, tail, taillen, out)) < 0 ||
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, key->taglen, out + done) != 1)
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

/* The HMAC of aad || iv || text || high into icv (the whole digest), 0; -1 on a failure.
 * The context keeps its key: each message starts from it again (EVP_MAC_init, no key). */
static int mac_of(Key *key, const unsigned char *aad, int aadlen, const unsigned char *iv,
                  const unsigned char *text, int textlen, const unsigned char *high, int highlen,
                  unsigned char *icv) {
    EVP_MAC_CTX *mac = key->mac;
    size_t made = 0;
    if (EVP_MAC_init(mac, NULL, 0, NULL) != 1 || EVP_MAC_update(mac, aad, aadlen) != 1 ||
        EVP_MAC_update(mac, iv, key->ivlen) != 1 || EVP_MAC_update(mac, text, textlen) != 1 ||
        (highlen && EVP_MAC_update(mac, high, highlen) != 1) ||
        EVP_MAC_final(mac, icv, &made, MAX_ICV) != 1)
        return -1;
    return 0;
}

/* ciphertext || ICV of (part || tail), whole blocks, encrypted under iv, then the ICV over
 * aad || iv || ciphertext || high (RFC 4303 §3.3.2, §2.2.1): encrypt-then-MAC. */
static int etm_seal(Key *key, const unsigned char *iv, const unsigned char *aad, int aadlen,
                    const unsigned char *part, int partlen, const unsigned char *tail,
                    int taillen, const unsigned char *high, int highlen, unsigned char *out) {
    EVP_CIPHER_CTX *ctx = key->enc;
    unsigned char icv[MAX_ICV];
    int done;
    if (EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, iv) != 1 ||
        (done = encrypt_parts(ctx, part, partlen, tail, taillen, out)) < 0 ||
        mac_of(key, aad, aadlen, iv, out, done, high, highlen, icv) < 0)
        return -1;
    memcpy(out + done, icv, key->taglen);
    return done + key->taglen;
}

/* As aead_open, for encrypt-then-MAC: the ICV is checked (in constant time) before
 * anything is decrypted (RFC 4303 §3.4.4). */
static int etm_open(Key *key, const unsigned char *iv, const unsigned char *aad, int aadlen,
                    const unsigned char *data, int datalen, const unsigned char *high,
                    int highlen, unsigned char *out) {
    EVP_CIPHER_CTX *ctx = key->dec;
    int textlen = datalen - key->taglen, n = 0, last = 0;
    unsigned char icv[MAX_ICV];
    if (mac_of(key, aad, aadlen, iv, data, textlen, high, highlen, icv) < 0)
        return -1;
    if (CRYPTO_memcmp(icv, data + textlen, key->taglen) != 0)
        return 0;
    if (EVP_DecryptInit_ex(ctx, NULL, NULL, NULL, iv) != 1 ||
        EVP_DecryptUpdate(ctx, out, &n, data, textlen) != 1 ||
        EVP_DecryptFinal_ex(ctx, out + n, &last) != 1)
        return -1;
    return 1;
}

static PyObject *library_error(void) {
    PyErr_SetString(PyExc_RuntimeError, "libcrypto failed an ESP cipher operation");
    return NULL;
}

static void key_dealloc(Key *self) {
    EVP_CIPHER_CTX_free(self->enc);
    EVP_CIPHER_CTX_free(self->dec);
    EVP_MAC_CTX_free(self->mac);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int positional_only(PyObject *kwds, const char *type) {
    if (kwds && PyDict_Size(kwds)) {
        PyErr_Format(PyExc_TypeError, "%s takes positional arguments only", type);
        return 0;
    }
    return 1;
}

/* A context each way for cipher under key, made anew (whole blocks: no padding of its
 * own, ESP pads); 0 with an exception if libcrypto fails. */
static int keyed_contexts(Key *self, const EVP_CIPHER *cipher, const void *key) {
    EVP_CIPHER_CTX_free(self->enc);
    EVP_CIPHER_CTX_free(self->dec);
    self->enc = EVP_CIPHER_CTX_new();
    self->dec = EVP_CIPHER_CTX_new();
    if (self->enc && self->dec && EVP_EncryptInit_ex(self->enc, cipher, NULL, key, NULL) == 1 &&
        EVP_DecryptInit_ex(self->dec, cipher, NULL, key, NULL) == 1 &&
        EVP_CIPHER_CTX_set_padding(self->enc, 0) == 1 &&
        EVP_CIPHER_CTX_set_padding(self->dec, 0) == 1)
        return 1;
    library_error();
    return 0;
}

/* Key(cipher, key, salt, taglen): an AEAD key, cipher libcrypto's name of it. */
static int key_init(Key *self, PyObject *args, PyObject *kwds) {
    const char *cipher_name;
    Py_buffer key, salt;
    int taglen;
    if (!positional_only(kwds, "Key") ||
        !PyArg_ParseTuple(args, "sy*y*i", &cipher_name, &key, &salt, &taglen))
        return -1;
    int ok = -1;
    EVP_CIPHER *cipher = EVP_CIPHER_fetch(NULL, cipher_name, NULL);
    if (salt.len != SALT || taglen < 4 || taglen > AEAD_MAX_ICV) {
        PyErr_SetString(PyExc_ValueError, "Key: a 4-byte salt and an ICV of 4 to 16 bytes");
    } else if (cipher == NULL || EVP_CIPHER_get_key_length(cipher) != key.len ||
               EVP_CIPHER_get_iv_length(cipher) != NONCE ||
               !(EVP_CIPHER_get_flags(cipher) & EVP_CIPH_FLAG_AEAD_CIPHER)) {
        PyErr_Format(PyExc_ValueError, "Key: no %zd-byte key AEAD named %s", key.len, cipher_name);
    } else if (keyed_contexts(self, cipher, key.buf)) {
        memcpy(self->salt, salt.buf, SALT);
        self->ivlen = IV;
        self->block = 1;
        self->taglen = taglen;
        ok = 0;
    }
    EVP_CIPHER_free(cipher);
    PyBuffer_Release(&key);
    PyBuffer_Release(&salt);
    return ok;
}

/* The HMAC context of digest under authkey, or NULL with an exception. */
static EVP_MAC_CTX *hmac_context(const char *digest, const Py_buffer *authkey) {
    EVP_MAC *hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    EVP_MAC_CTX *made = hmac ? EVP_MAC_CTX_new(hmac) : NULL;
    OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *)digest, 0),
        OSSL_PARAM_construct_end(),
    };
    EVP_MAC_free(hmac);
    if (made == NULL || EVP_MAC_init(made, authkey->buf, (size_t)authkey->len, params) != 1) {
        EVP_MAC_CTX_free(made);
        PyErr_Format(PyExc_ValueError, "EtmKey: no HMAC over a digest named %s", digest);
        return NULL;
    }
    return made;
}

/* EtmKey(cipher, key, digest, authkey, taglen): encrypt-then-MAC keys, cipher libcrypto's
 * name of a block cipher mode with a one-block IV (AES-128-CBC, ...), digest its name of
 * the HMAC's hash (SHA256, ...), the ICV the digest's first taglen bytes. */
static int etm_init(Key *self, PyObject *args, PyObject *kwds) {
    const char *cipher_name, *digest;
    Py_buffer key, authkey;
    int taglen;
    if (!positional_only(kwds, "EtmKey") ||
        !PyArg_ParseTuple(args, "sy*sy*i", &cipher_name, &key, &digest, &authkey, &taglen))
        return -1;
    int ok = -1;
    EVP_CIPHER *cipher = EVP_CIPHER_fetch(NULL, cipher_name, NULL);
    EVP_MAC_CTX *mac = NULL;
    int block = cipher ? EVP_CIPHER_get_block_size(cipher) : 0;
    if (cipher == NULL || EVP_CIPHER_get_key_length(cipher) != key.len || block < 8 ||
        block > MAX_BLOCK || EVP_CIPHER_get_iv_length(cipher) != block) {
        PyErr_Format(PyExc_ValueError, "EtmKey: no %zd-byte key block cipher mode named %s",
                     key.len, cipher_name);
    } else if ((mac = hmac_context(digest, &authkey)) != NULL) {
        if (taglen < 1 || (size_t)taglen > EVP_MAC_CTX_get_mac_size(mac)) {
            PyErr_SetString(PyExc_ValueError, "EtmKey: an ICV of 1 byte to the whole digest");
        } else if (keyed_contexts(self, cipher, key.buf)) {
            EVP_MAC_CTX_free(self->mac);
            self->mac = mac;
            mac = NULL;
            self->ivlen = self->block = block;
            self->taglen = taglen;
            ok = 0;
        }
    }
    EVP_MAC_CTX_free(mac);
    EVP_CIPHER_free(cipher);
    PyBuffer_Release(&key);
    PyBuffer_Release(&authkey);
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

/* (iv, text, aad) of a one-packet call; 0 with an exception if malformed. */
static int one_packet(Key *self, PyObject *const *args, Py_ssize_t nargs, const char *method,
                      PyObject **iv, PyObject **text, PyObject **aad) {
    if (!ready(self) || !check_args(nargs, 3, method) || !(*iv = bytes_arg(args, 0, "iv")) ||
        !(*text = bytes_arg(args, 1, "data")) || !(*aad = bytes_arg(args, 2, "aad")))
        return 0;
    if (PyBytes_GET_SIZE(*iv) != self->ivlen || PyBytes_GET_SIZE(*text) > INT_MAX - MAX_ICV ||
        PyBytes_GET_SIZE(*aad) > INT_MAX) {
        PyErr_Format(PyExc_ValueError, "%s: an IV of %d bytes and data under 2 GiB", method,
                     self->ivlen);
        return 0;
    }
    return 1;
}

/* The AEAD nonce of an 8-byte IV (RFC 4106 §4, RFC 7634 §2): the salt, then the IV. */
static const unsigned char *nonce_of(Key *self, const unsigned char *iv, unsigned char *nonce) {
    memcpy(nonce, self->salt, SALT);
    memcpy(nonce + SALT, iv, IV);
    return nonce;
}

static int whole_blocks(Key *self, Py_ssize_t size, const char *method) {
    if (size % self->block) {
        PyErr_Format(PyExc_ValueError, "%s: the text is whole %d-byte blocks", method,
                     self->block);
        return 0;
    }
    return 1;
}

static PyObject *key_seal(Key *self, PyObject *const *args, Py_ssize_t nargs) {
    unsigned char nonce[NONCE];
    PyObject *iv, *text, *aad;
    if (!one_packet(self, args, nargs, "seal", &iv, &text, &aad))
        return NULL;
    Py_ssize_t size = PyBytes_GET_SIZE(text);
    if (!whole_blocks(self, size, "seal"))
        return NULL;
    PyObject *out = PyBytes_FromStringAndSize(NULL, size + self->taglen);
    if (out == NULL)
        return NULL;
    const unsigned char *ivs = (unsigned char *)PyBytes_AS_STRING(iv);
    const unsigned char *aads = (unsigned char *)PyBytes_AS_STRING(aad);
    const unsigned char *texts = (unsigned char *)PyBytes_AS_STRING(text);
    int aadlen = (int)PyBytes_GET_SIZE(aad);
    unsigned char *outs = (unsigned char *)PyBytes_AS_STRING(out);
    int done = self->mac ? etm_seal(self, ivs, aads, aadlen, texts, (int)size, NULL, 0, NULL, 0,
                                    outs)
                         : aead_seal(self, nonce_of(self, ivs, nonce), aads, aadlen, texts,
                                     (int)size, NULL, 0, outs);
    if (done < 0) {
        Py_DECREF(out);
        return library_error();
    }
    return out;
}

static PyObject *key_open(Key *self, PyObject *const *args, Py_ssize_t nargs) {
    unsigned char nonce[NONCE];
    PyObject *iv, *data, *aad;
    if (!one_packet(self, args, nargs, "open", &iv, &data, &aad))
        return NULL;
    Py_ssize_t size = PyBytes_GET_SIZE(data);
    if (size < self->taglen) {
        PyErr_SetString(Forged, "the data cannot hold the ICV");
        return NULL;
    }
    if (!whole_blocks(self, size - self->taglen, "open"))
        return NULL;
    PyObject *out = PyBytes_FromStringAndSize(NULL, size - self->taglen);
    if (out == NULL)
        return NULL;
    const unsigned char *ivs = (unsigned char *)PyBytes_AS_STRING(iv);
    const unsigned char *aads = (unsigned char *)PyBytes_AS_STRING(aad);
    const unsigned char *datas = (unsigned char *)PyBytes_AS_STRING(data);
    int aadlen = (int)PyBytes_GET_SIZE(aad);
    unsigned char *outs = (unsigned char *)PyBytes_AS_STRING(out);
    int verified = self->mac ? etm_open(self, ivs, aads, aadlen, datas, (int)size, NULL, 0, outs)
                             : aead_open(self, nonce_of(self, ivs, nonce), aads, aadlen, datas,
                                         (int)size, outs);
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

/* The ESP packet at esp, its SPI and sequence number written: its IV, then the inner
 * packet and the trailer sealed behind it (§3.3). The AEADs' IV is seq ^ iv_salt; CBC's
 * is random_iv (RFC 3602 §3: unpredictable). */
static int seal_esp(Key *self, unsigned char *esp, uint64_t seq, uint64_t iv_salt,
                    const unsigned char *random_iv, const unsigned char *inner, int size,
                    const unsigned char *trailer, int taillen) {
    unsigned char *iv = esp + ESP_HEADER, *out = iv + self->ivlen;
    if (self->mac) {
        unsigned char high[4];
        put32(high, (uint32_t)(seq >> 32));
        memcpy(iv, random_iv, self->ivlen);
        return etm_seal(self, iv, esp, ESP_HEADER, inner, size, trailer, taillen, high,
                        self->esn ? 4 : 0, out);
    }
    unsigned char nonce[NONCE], aad[12];
    put64(iv, seq ^ iv_salt);
    int aadlen = esp_aad(aad, self->spi, seq, self->esn);
    return aead_seal(self, nonce_of(self, iv, nonce), aad, aadlen, inner, size, trailer, taillen,
                     out);
}

/* 1 and the plaintext of the ESP packet at esp (body bytes of it) if its ICV verifies, 0 if
 * not, -1 on a failure; as number seq (its high bits for ESN's ICV or AAD). */
static int open_esp(Key *self, const unsigned char *esp, Py_ssize_t body, uint64_t seq,
                    unsigned char *plain) {
    const unsigned char *iv = esp + ESP_HEADER, *data = iv + self->ivlen;
    int datalen = (int)(body + self->taglen);
    if (self->mac) {
        unsigned char high[4];
        put32(high, (uint32_t)(seq >> 32));
        return etm_open(self, iv, esp, ESP_HEADER, data, datalen, high, self->esn ? 4 : 0,
                        plain);
    }
    unsigned char nonce[NONCE], aad[12];
    int aadlen = esp_aad(aad, self->spi, seq, self->esn);
    return aead_open(self, nonce_of(self, iv, nonce), aad, aadlen, data, datalen, plain);
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
    if (PyBytes_GET_SIZE(spi) != 4 || align < 1 || align > 255 || align % self->block) {
        PyErr_SetString(PyExc_ValueError,
                        "bind: a 4-byte SPI and an alignment of 1 to 255, whole blocks");
        return NULL;
    }
    memcpy(self->spi, PyBytes_AS_STRING(spi), 4);
    self->esn = esn;
    self->align = (int)align;
    Py_RETURN_NONE;
}

/* seal_run's work, over packets as a list or a tuple. */
static PyObject *seal_packets(Key *self, PyObject *packets, uint64_t seq, uint64_t iv_salt,
                              PyObject *ivs, PyObject *header) {
    Py_ssize_t headlen = PyBytes_GET_SIZE(header), count = PySequence_Fast_GET_SIZE(packets);
    if (headlen != 0 && headlen != IPV4 && headlen != IPV4 + UDP) {
        PyErr_SetString(PyExc_ValueError, "seal_run: the header is IPv4, IPv4 and UDP, or none");
        return NULL;
    }
    if (PyBytes_GET_SIZE(ivs) != (self->mac ? count * self->ivlen : 0)) {
        PyErr_SetString(PyExc_ValueError,
                        "seal_run: random IVs, one per packet, for a CBC key; none for an AEAD");
        return NULL;
    }
    const unsigned char *random_ivs = (unsigned char *)PyBytes_AS_STRING(ivs);
    PyObject *out = PyList_New(count);
    if (out == NULL)
        return NULL;
    const unsigned char *template = (unsigned char *)PyBytes_AS_STRING(header);
    uint64_t words = word_sum(template, headlen < IPV4 ? headlen : IPV4);
    unsigned ident = 0; /* the template's, counted up from packet to packet */
    if (headlen) {
        ident = (unsigned)template[4] << 8 | template[5];
        words -= ident;
    }
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
        unsigned char trailer[257];
        int pad = (int)((align - (size + 2) % align) % align);
        for (int k = 0; k < pad; k++)
            trailer[k] = (unsigned char)(k + 1);
        trailer[pad] = (unsigned char)pad;
        trailer[pad + 1] = inner[0] >> 4 == 4 ? IPPROTO_IPIP : IPPROTO_IPV6;
        Py_ssize_t esplen = ESP_HEADER + self->ivlen + size + pad + 2 + self->taglen;
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
                         ident & 0xFFFF);
        at += headlen;
        memcpy(at, self->spi, 4);
        put32(at + 4, (uint32_t)seq);
        if (seal_esp(self, at, seq, iv_salt, random_ivs + i * self->ivlen, inner, (int)size,
                     trailer, pad + 2) < 0) {
            Py_DECREF(esp);
            Py_DECREF(out);
            return library_error();
        }
        PyList_SET_ITEM(out, i, esp);
    }
    return out;
}

/* seal_run(packets, seq, iv_salt, ivs, header) -> list of bytes
 * packets (inner packets of one flow) as the bound SA's ESP packets numbered from seq,
 * each AEAD IV seq ^ iv_salt (RFC 4106 §3.1 and RFC 7634 §2 ask only that it be unique
 * under the key; the readable path makes the same one), each CBC IV the next of ivs
 * (random ones, RFC 3602 §3; b"" for an AEAD), padded to the alignment with the
 * trailer's next header by the IP version (§2.4); behind a copy of header (an outer IPv4,
 * or IPv4 and UDP, header with the first packet's identification, length and checksums
 * zero) unless it is empty, the identification counted up from packet to packet. */
static PyObject *key_seal_run(Key *self, PyObject *const *args, Py_ssize_t nargs) {
    uint64_t seq, iv_salt;
    PyObject *packets, *ivs, *header, *out;
    if (!bound(self) || !check_args(nargs, 5, "seal_run") || !as_u64(args[1], &seq) ||
        !as_u64(args[2], &iv_salt) || !(ivs = bytes_arg(args, 3, "ivs")) ||
        !(header = bytes_arg(args, 4, "header")) ||
        !(packets = PySequence_Fast(args[0], "packets: a sequence")))
        return NULL;
    out = seal_packets(self, packets, seq, iv_salt, ivs, header);
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
    Py_ssize_t body = PyBytes_GET_SIZE(esp) - ESP_HEADER - self->ivlen - self->taglen;
    if (body < 2 || body % self->align || body % self->block)
        return BAD_LENGTH;
    PyObject *opened = PyBytes_FromStringAndSize(NULL, body);
    if (opened == NULL)
        return -1;
    unsigned char *plain = (unsigned char *)PyBytes_AS_STRING(opened);
    int verified = open_esp(self, (unsigned char *)PyBytes_AS_STRING(esp), body, seq, plain);
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
     "seal_run(packets, seq, iv_salt, ivs, header) -> ESP packets"},
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

static PyTypeObject EtmKeyType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "_esp_batch.EtmKey",
    .tp_basicsize = sizeof(Key),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "EtmKey(cipher, key, digest, authkey, taglen): one ESP SA's encrypt-then-MAC keys",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)etm_init,
    .tp_dealloc = (destructor)key_dealloc,
    .tp_methods = key_methods,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_esp_batch", "ESP's ciphers over libcrypto, by packet or by run.", -1,
    NULL, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__esp_batch(void) {
    if (PyType_Ready(&KeyType) < 0 || PyType_Ready(&EtmKeyType) < 0)
        return NULL;
    PyObject *made = PyModule_Create(&module);
    if (made == NULL)
        return NULL;
    Forged = PyErr_NewException("_esp_batch.Forged", NULL, NULL);
    if (Forged == NULL || PyModule_AddObjectRef(made, "Forged", Forged) < 0 ||
        PyModule_AddObjectRef(made, "Key", (PyObject *)&KeyType) < 0 ||
        PyModule_AddObjectRef(made, "EtmKey", (PyObject *)&EtmKeyType) < 0) {
        Py_DECREF(made);
        return NULL;
    }
    return made;
}
