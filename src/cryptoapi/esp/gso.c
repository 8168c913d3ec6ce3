/* gso.c: cryptoapi.esp.gso's split in C, for espd's TUN reads.
 *
 * The same packets and the same errors as gso.py, which is the reference and the module
 * doc (the tests compare the two on every case they build and on random frames): a read
 * with a virtio-net header is the packet behind it, its partial checksum completed, or the
 * segments of its TCP or UDP super-segment, as Linux tcp_gso_segment and __udp_gso_segment
 * cut them. split(error, frame) returns a list of bytes or raises error (gso.py's
 * OffloadError, first so that functools.partial can bind it) naming what was wrong.
 *
 * Checksums are RFC 1071 sums of 16-bit words taken mod 0xFFFF, as ip.checksum computes
 * them over big integers: 2^16 is 1 mod 0xFFFF, so the two agree word for word.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>

#define VNET_SIZE 10
#define F_NEEDS_CSUM 1
#define GSO_NONE 0
#define GSO_TCPV4 1
#define GSO_TCPV6 4
#define GSO_UDP_L4 5
#define GSO_ECN 0x80
#define TCP_CHECKSUM 16
#define UDP_CHECKSUM 6
#define IPV4_HEADER 20
#define IPV6_HEADER 40
#define TCP_HEADER 20
#define UDP_HEADER 8
#define PROTO_TCP 6
#define PROTO_UDP 17
#define DF 0x4000
#define TCP_FIN 0x01
#define TCP_PSH 0x08
#define TCP_CWR 0x80

/* struct virtio_net_hdr, host byte order (vnet.py's HEADER). */
struct vnet_header {
    uint8_t flags;
    uint8_t gso_type;
    uint16_t hdr_len;
    uint16_t gso_size;
    uint16_t csum_start;
    uint16_t csum_offset;
};

static unsigned be16(const uint8_t *p) { return (unsigned)p[0] << 8 | p[1]; }

static void put16(uint8_t *p, unsigned value) {
    p[0] = (uint8_t)(value >> 8);
    p[1] = (uint8_t)value;
}

/* The sum of data's 16-bit big-endian words, an odd last byte padded with a zero. */
static uint64_t words(const uint8_t *data, Py_ssize_t size) {
    uint64_t sum = 0;
    Py_ssize_t at = 0;
    for (; at + 1 < size; at += 2)
        sum += be16(data + at);
    if (at < size)
        sum += (unsigned)data[at] << 8;
    return sum;
}

/* ip.checksum: the ones' complement of a sum that is never +0 when anything was summed. */
static unsigned checksum(uint64_t sum) {
    unsigned total = (unsigned)(sum % 0xFFFF);
    if (total == 0 && sum != 0)
        total = 0xFFFF;
    return 0xFFFF - total;
}

/* ip.pseudo_header_sum without protocol and length: the addresses' words. */
static uint64_t addresses(const uint8_t *packet) {
    return packet[0] >> 4 == 4 ? words(packet + 12, 8) : words(packet + 8, 32);
}

typedef struct {
    PyObject *error; /* gso.py's OffloadError */
    const uint8_t *packet;
    Py_ssize_t size;
    struct vnet_header head;
} Frame;

static PyObject *refuse(const Frame *f, const char *format, ...) {
    va_list args;
    va_start(args, format);
    PyObject *message = PyUnicode_FromFormatV(format, args);
    va_end(args);
    if (message != NULL) {
        PyErr_SetObject(f->error, message);
        Py_DECREF(message);
    }
    return NULL;
}

static PyObject *one(PyObject *packet) {
    if (packet == NULL)
        return NULL;
    PyObject *list = PyList_New(1);
    if (list == NULL) {
        Py_DECREF(packet);
        return NULL;
    }
    PyList_SET_ITEM(list, 0, packet);
    return list;
}

/* gso._completed: the packet, its partial checksum (if the header says so) completed. */
static PyObject *completed(const Frame *f) {
    PyObject *out = PyBytes_FromStringAndSize((const char *)f->packet, f->size);
    if (out == NULL || !(f->head.flags & F_NEEDS_CSUM))
        return out;
    Py_ssize_t start = f->head.csum_start, field = start + f->head.csum_offset;
    if ((f->head.csum_offset != TCP_CHECKSUM && f->head.csum_offset != UDP_CHECKSUM) ||
        field + 2 > f->size) {
        Py_DECREF(out);
        return refuse(f, "a partial checksum at %d+%d of a %zd-byte packet",
                      (int)f->head.csum_start, (int)f->head.csum_offset, f->size);
    }
    unsigned value = checksum(words(f->packet + start, f->size - start));
    if (f->head.csum_offset == UDP_CHECKSUM && value == 0)
        value = 0xFFFF;
    put16((uint8_t *)PyBytes_AS_STRING(out) + field, value);
    return out;
}

/* gso._transport: where the proto header starts, after a plain IP header; -1 (raised). */
static Py_ssize_t transport(const Frame *f, unsigned proto) {
    const uint8_t *p = f->packet;
    unsigned version = f->size ? p[0] >> 4 : 0;
    if (version == 4 && f->size >= IPV4_HEADER) {
        Py_ssize_t start = (p[0] & 0x0F) * 4;
        if (p[9] == proto && start >= IPV4_HEADER && !(be16(p + 6) & ~DF))
            return start;
    } else if (version == 6 && f->size >= IPV6_HEADER && p[6] == proto) {
        return IPV6_HEADER;
    }
    refuse(f, "a super-segment that is not plain IP carrying protocol %u", proto);
    return -1;
}

/* One segment: the IP header (start bytes, its length, identification and checksum per
 * segment, as gso._ip_headers), then the transport header, then the piece; the transport
 * header's fields are the caller's to fill in. */
static PyObject *segment(const Frame *f, Py_ssize_t start, Py_ssize_t header, Py_ssize_t number,
                         const uint8_t *piece, Py_ssize_t size, uint8_t **transport_at) {
    PyObject *out = PyBytes_FromStringAndSize(NULL, start + header + size);
    if (out == NULL)
        return NULL;
    uint8_t *p = (uint8_t *)PyBytes_AS_STRING(out);
    memcpy(p, f->packet, (size_t)(start + header));
    memcpy(p + start + header, piece, (size_t)size);
    if (p[0] >> 4 == 6) {
        put16(p + 4, (unsigned)(start - IPV6_HEADER + header + size));
    } else {
        put16(p + 2, (unsigned)(start + header + size));
        put16(p + 4, (be16(f->packet + 4) + (unsigned)number) & 0xFFFF);
        put16(p + 10, 0);
        put16(p + 10, checksum(words(p, start)));
    }
    *transport_at = p + start;
    return out;
}

static PyObject *tcp_segments(const Frame *f) {
    Py_ssize_t start = transport(f, PROTO_TCP);
    if (start < 0)
        return NULL;
    Py_ssize_t end = f->size > start + 12 ? start + (f->packet[start + 12] >> 4) * 4 : 0;
    if (end < start + TCP_HEADER || end > f->size)
        return refuse(f, "a TCP super-segment whose TCP header is cut short");
    Py_ssize_t payload = f->size - end, size = f->head.gso_size;
    if (payload <= size)
        return one(completed(f));
    if (size <= 0)
        return refuse(f, "a super-segment with segment size %zd", size);
    const uint8_t *tcp = f->packet + start;
    uint32_t seq = (uint32_t)be16(tcp + 4) << 16 | be16(tcp + 6);
    uint8_t flags = tcp[13];
    /* The template's words without sequence number, flags and checksum. */
    uint64_t common = addresses(f->packet) + PROTO_TCP + words(tcp, end - start) -
                      be16(tcp + 4) - be16(tcp + 6) - be16(tcp + 12) - be16(tcp + 16) +
                      (unsigned)(tcp[12] << 8);
    Py_ssize_t count = (payload + size - 1) / size;
    PyObject *list = PyList_New(count);
    if (list == NULL)
        return NULL;
    for (Py_ssize_t number = 0; number < count; number++) {
        const uint8_t *piece = f->packet + end + number * size;
        Py_ssize_t length = number == count - 1 ? payload - number * size : size;
        uint8_t *out;
        PyObject *made = segment(f, start, end - start, number, piece, length, &out);
        if (made == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        uint32_t this = seq + (uint32_t)(number * size);
        uint8_t kept = number == count - 1 ? flags : flags & ~(TCP_FIN | TCP_PSH);
        if (number)
            kept &= (uint8_t)~TCP_CWR;
        put16(out + 4, this >> 16);
        put16(out + 6, this & 0xFFFF);
        out[13] = kept;
        uint64_t sum = common + (this >> 16) + (this & 0xFFFF) + kept +
                       (uint64_t)(end - start + length) + words(piece, length);
        put16(out + 16, checksum(sum));
        PyList_SET_ITEM(list, number, made);
    }
    return list;
}

static PyObject *udp_segments(const Frame *f) {
    Py_ssize_t start = transport(f, PROTO_UDP);
    if (start < 0)
        return NULL;
    if (f->size < start + UDP_HEADER)
        return refuse(f, "a UDP super-segment whose UDP header is cut short");
    Py_ssize_t payload = f->size - start - UDP_HEADER, size = f->head.gso_size;
    if (payload <= size)
        return one(completed(f));
    if (size <= 0)
        return refuse(f, "a super-segment with segment size %zd", size);
    uint64_t common = addresses(f->packet) + PROTO_UDP + words(f->packet + start, 4);
    Py_ssize_t count = (payload + size - 1) / size;
    PyObject *list = PyList_New(count);
    if (list == NULL)
        return NULL;
    for (Py_ssize_t number = 0; number < count; number++) {
        const uint8_t *piece = f->packet + start + UDP_HEADER + number * size;
        Py_ssize_t length = UDP_HEADER + (number == count - 1 ? payload - number * size : size);
        uint8_t *out;
        PyObject *made = segment(f, start, UDP_HEADER, number, piece, length - UDP_HEADER, &out);
        if (made == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        /* the length counts twice: in the header and in the pseudo-header */
        unsigned value = checksum(common + 2 * (uint64_t)length + words(piece, length - UDP_HEADER));
        put16(out + 4, (unsigned)length);
        put16(out + 6, value ? value : 0xFFFF);
        PyList_SET_ITEM(list, number, made);
    }
    return list;
}

static PyObject *split(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 2 || !PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "split(error, frame): frame must be bytes");
        return NULL;
    }
    const uint8_t *data = (const uint8_t *)PyBytes_AS_STRING(args[1]);
    Py_ssize_t size = PyBytes_GET_SIZE(args[1]);
    Frame f = {args[0], data + VNET_SIZE, size - VNET_SIZE, {0, 0, 0, 0, 0, 0}};
    if (size < VNET_SIZE)
        return refuse(&f, "%zd bytes: shorter than a virtio-net header", size);
    memcpy(&f.head, data, VNET_SIZE);
    switch (f.head.gso_type & ~GSO_ECN) {
    case GSO_NONE:
        return one(completed(&f));
    case GSO_TCPV4:
    case GSO_TCPV6:
        return tcp_segments(&f);
    case GSO_UDP_L4:
        return udp_segments(&f);
    default:
        return refuse(&f, "GSO type 0x%x is not one espd turns on", (unsigned)f.head.gso_type);
    }
}

static PyMethodDef methods[] = {
    {"split", (PyCFunction)(void (*)(void))split, METH_FASTCALL,
     "split(error, frame): the packets a TUN read stands for, as gso.py's split."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_esp_gso", "cryptoapi.esp.gso's split in C.", 0, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__esp_gso(void) { return PyModule_Create(&module); }
