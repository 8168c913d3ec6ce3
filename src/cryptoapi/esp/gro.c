/* gro.c: cryptoapi.esp.gro's coalescing in C, for espd's TUN writes.
 *
 * The same rules and the same bytes as gro.py, which is the reference and the module doc
 * (the tests compare the two on every case they build and on random packet streams):
 * consecutive TCP segments of one flow that follow on from one another become one
 * super-segment (Linux tcp_gro_receive's rules), consecutive UDP datagrams of one flow one
 * GSO_UDP_L4 packet, each with a virtio-net header and the transport checksum left partial;
 * anything else is written as it came, after a plain header.
 *
 * gro.py costs about 2 us a packet in a busy receiver; here the comparisons are memcmp and
 * the frame one allocation. The module holds no state: coalesce(frame, packets) returns a
 * list of frame(data, count), frame being gro.py's Frame.
 * (frame comes first so that functools.partial can bind it.)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define IPV4_HEADER 20
#define IPV6_HEADER 40
#define TCP_HEADER 20
#define UDP_HEADER 8
#define IPPROTO_TCP_ 6
#define IPPROTO_UDP_ 17
#define TCP_PSH 0x08
#define TCP_ACK 0x10
#define DF 0x4000
#define MAX_PACKET 0xFFFF

/* struct virtio_net_hdr (<linux/virtio_net.h>), host byte order as a legacy TUN has it. */
struct vnet_header {
    uint8_t flags;
    uint8_t gso_type;
    uint16_t hdr_len;
    uint16_t gso_size;
    uint16_t csum_start;
    uint16_t csum_offset;
};
#define VNET_SIZE 10
#define F_NEEDS_CSUM 1
#define GSO_TCPV4 1
#define GSO_TCPV6 4
#define GSO_UDP_L4 5
#define TCP_CHECKSUM 16
#define UDP_CHECKSUM 6

typedef struct {
    const uint8_t *data;
    Py_ssize_t size;
} Packet;

/* The spans gro.py's ip.flow_parts names: the header but for its length, identification
 * and checksums, in three parts, then where the stated length is and what it leaves out. */
typedef struct {
    Py_ssize_t a, b, c, d, e, f, length_at, extra;
} Parts;

static unsigned be16(const uint8_t *p) { return (unsigned)p[0] << 8 | p[1]; }

static uint32_t be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put16(uint8_t *p, unsigned value) {
    p[0] = (uint8_t)(value >> 8);
    p[1] = (uint8_t)value;
}

static Parts parts_of(const uint8_t *first) {
    if (first[0] == 0x45)
        return (Parts){0, 2, 6, 10, 12, IPV4_HEADER + 4, 2, 0};
    return (Parts){0, 4, 6, 8, 8, IPV6_HEADER + 4, 4, IPV6_HEADER};
}

static int same(const Packet *p, const Packet *first, Py_ssize_t from, Py_ssize_t to) {
    return memcmp(p->data + from, first->data + from, (size_t)(to - from)) == 0;
}

/* The same flow and header fields as the run's first packet, and a stated length that is
 * the packet's own (the caller has checked it is longer than the headers). */
static int same_flow(const Packet *p, const Packet *first, const Parts *s) {
    return same(p, first, s->e, s->f) && same(p, first, s->c, s->d) &&
           same(p, first, s->a, s->b) && be16(p->data + s->length_at) + s->extra == p->size;
}

/* RFC 1071 over 16-bit words, as ip.checksum: the ones' complement sum is never +0. */
static unsigned ipv4_checksum(const uint8_t *header) {
    uint32_t sum = 0;
    for (int at = 0; at < IPV4_HEADER; at += 2)
        sum += be16(header + at);
    unsigned total = sum % 0xFFFF;
    if (total == 0 && sum != 0)
        total = 0xFFFF;
    return 0xFFFF - total;
}

/* The pseudo-header's sum mod 0xFFFF (ip.pseudo_header_sum): addresses, protocol, length. */
static unsigned pseudo_sum(const uint8_t *head, unsigned proto, Py_ssize_t length) {
    int v4 = head[0] >> 4 == 4;
    const uint8_t *addresses = head + (v4 ? 12 : 8);
    uint64_t sum = proto + (uint64_t)length;
    for (int at = 0; at < (v4 ? 8 : 32); at += 2)
        sum += be16(addresses + at);
    return (unsigned)(sum % 0xFFFF);
}

/* gro._opening: where the TCP header and payload start, the sequence number and IPv4
 * identification of a packet that may start a run; 0 if it cannot. */
static int tcp_opening(const Packet *p, Py_ssize_t *start, Py_ssize_t *end, uint32_t *seq,
                       unsigned *ident) {
    const uint8_t *d = p->data;
    if (p->size < IPV6_HEADER + TCP_HEADER)
        return 0;
    if (d[0] == 0x45) {
        if (d[9] != IPPROTO_TCP_ || (be16(d + 6) & ~DF) || be16(d + 2) != p->size)
            return 0;
        *start = IPV4_HEADER;
        *ident = be16(d + 4);
    } else if (d[0] >> 4 == 6) {
        if (d[6] != IPPROTO_TCP_ || be16(d + 4) + IPV6_HEADER != p->size)
            return 0;
        *start = IPV6_HEADER;
        *ident = 0;
    } else {
        return 0;
    }
    uint8_t flags = d[*start + 13];
    *seq = be32(d + *start + 4);
    *end = *start + (d[*start + 12] >> 4) * 4;
    if ((flags != TCP_ACK && flags != (TCP_ACK | TCP_PSH)) || *end < *start + TCP_HEADER ||
        *end >= p->size)
        return 0;
    return 1;
}

/* gro._run: how many packets from at on make one TCP run; 0 if that one cannot start one. */
static Py_ssize_t tcp_run(const Packet *packets, Py_ssize_t count, Py_ssize_t at) {
    const Packet *first = &packets[at];
    Py_ssize_t start, end;
    uint32_t seq;
    unsigned ident;
    if (!tcp_opening(first, &start, &end, &seq, &ident))
        return 0;
    if (first->data[start + 13] & TCP_PSH)
        return 1;
    Parts s = parts_of(first->data);
    Py_ssize_t size = first->size - end, total = first->size, taken = 1;
    uint32_t next_seq = seq + (uint32_t)size;
    for (Py_ssize_t index = at + 1; index < count; index++) {
        const Packet *p = &packets[index];
        Py_ssize_t length = p->size - end;
        uint8_t flags = length > 0 ? p->data[start + 13] : 0;
        if ((flags != TCP_ACK && flags != (TCP_ACK | TCP_PSH)) || length > size ||
            total + length > MAX_PACKET || !same_flow(p, first, &s) ||
            !same(p, first, start + 8, start + 13) ||         /* ack number, header length */
            !same(p, first, start + 14, start + 16) ||        /* window */
            !same(p, first, start + TCP_HEADER, end) ||       /* options */
            be32(p->data + start + 4) != next_seq ||
            (s.extra == 0 && be16(p->data + 4) != ((ident + (unsigned)taken) & 0xFFFF)))
            break;
        taken++;
        total += length;
        next_seq += (uint32_t)length;
        if (length < size || (flags & TCP_PSH))
            break;
    }
    return taken;
}

/* gro._udp_opening: where the UDP header starts in a datagram that may start a run, or 0. */
static Py_ssize_t udp_opening(const Packet *p) {
    const uint8_t *d = p->data;
    Py_ssize_t start;
    if (p->size < IPV6_HEADER + UDP_HEADER)
        return 0;
    if (d[0] == 0x45) {
        if (d[9] != IPPROTO_UDP_ || (be16(d + 6) & ~DF) || be16(d + 2) != p->size)
            return 0;
        start = IPV4_HEADER;
    } else if (d[0] >> 4 == 6) {
        if (d[6] != IPPROTO_UDP_ || be16(d + 4) + IPV6_HEADER != p->size)
            return 0;
        start = IPV6_HEADER;
    } else {
        return 0;
    }
    Py_ssize_t length = be16(d + start + 4);
    if (length != p->size - start || length <= UDP_HEADER || be16(d + start + 6) == 0)
        return 0;
    return start;
}

/* gro._udp_run: how many datagrams from at on make one run; 0 if that one cannot start one. */
static Py_ssize_t udp_run(const Packet *packets, Py_ssize_t count, Py_ssize_t at) {
    const Packet *first = &packets[at];
    Py_ssize_t start = udp_opening(first);
    if (!start)
        return 0;
    Parts s = parts_of(first->data);
    Py_ssize_t end = start + UDP_HEADER, size = first->size - end, total = first->size;
    Py_ssize_t taken = 1;
    unsigned ident = be16(first->data + 4);
    for (Py_ssize_t index = at + 1; index < count; index++) {
        const Packet *p = &packets[index];
        Py_ssize_t length = p->size - end;
        if (length <= 0 || length > size || total + length > MAX_PACKET ||
            !same_flow(p, first, &s) ||
            be16(p->data + start + 4) != length + UDP_HEADER ||
            be16(p->data + start + 6) == 0 ||
            (s.extra == 0 && be16(p->data + 4) != ((ident + (unsigned)taken) & 0xFFFF)))
            break;
        taken++;
        total += length;
        if (length < size)
            break;
    }
    return taken;
}

/* gro._frame for a run of two or more: one super-segment or USO packet, headers redone. */
static PyObject *run_frame(const Packet *run, Py_ssize_t count) {
    const uint8_t *first = run[0].data;
    int v4 = first[0] == 0x45;
    Py_ssize_t start = v4 ? IPV4_HEADER : IPV6_HEADER, end;
    unsigned proto, field, gso;
    if (first[v4 ? 9 : 6] == IPPROTO_UDP_) {
        proto = IPPROTO_UDP_, end = start + UDP_HEADER, field = UDP_CHECKSUM, gso = GSO_UDP_L4;
    } else {
        proto = IPPROTO_TCP_, end = start + (first[start + 12] >> 4) * 4, field = TCP_CHECKSUM;
        gso = v4 ? GSO_TCPV4 : GSO_TCPV6;
    }
    Py_ssize_t payload = 0;
    for (Py_ssize_t i = 0; i < count; i++)
        payload += run[i].size - end;
    PyObject *data = PyBytes_FromStringAndSize(NULL, VNET_SIZE + end + payload);
    if (data == NULL)
        return NULL;
    uint8_t *out = (uint8_t *)PyBytes_AS_STRING(data), *head = out + VNET_SIZE;
    memcpy(head, first, (size_t)end);
    uint8_t *at = head + end;
    for (Py_ssize_t i = 0; i < count; i++) {
        memcpy(at, run[i].data + end, (size_t)(run[i].size - end));
        at += run[i].size - end;
    }
    Py_ssize_t length = end - start + payload; /* of the TCP segment or UDP datagram */
    if (v4) {
        put16(head + 2, (unsigned)(end + payload));
        put16(head + 10, 0);
        put16(head + 10, ipv4_checksum(head));
    } else {
        put16(head + 4, (unsigned)length);
    }
    if (proto == IPPROTO_UDP_)
        put16(head + start + 4, (unsigned)length);
    else if (run[count - 1].data[start + 13] & TCP_PSH)
        head[start + 13] |= TCP_PSH;
    put16(head + start + field, pseudo_sum(head, proto, length));
    struct vnet_header vnet = {F_NEEDS_CSUM, (uint8_t)gso, (uint16_t)end,
                               (uint16_t)(run[0].size - end), (uint16_t)start, (uint16_t)field};
    memcpy(out, &vnet, VNET_SIZE);
    return data;
}

/* A packet alone: after the plain (all-zero) header. */
static PyObject *plain_frame(const Packet *p) {
    PyObject *data = PyBytes_FromStringAndSize(NULL, VNET_SIZE + p->size);
    if (data == NULL)
        return NULL;
    memset(PyBytes_AS_STRING(data), 0, VNET_SIZE);
    memcpy(PyBytes_AS_STRING(data) + VNET_SIZE, p->data, (size_t)p->size);
    return data;
}

static int append_frame(PyObject *frames, PyObject *frame_type, PyObject *data, Py_ssize_t n) {
    if (data == NULL)
        return -1;
    PyObject *packets = PyLong_FromSsize_t(n), *frame = NULL;
    if (packets != NULL)
        frame = PyObject_CallFunctionObjArgs(frame_type, data, packets, NULL);
    Py_DECREF(data);
    Py_XDECREF(packets);
    if (frame == NULL)
        return -1;
    int failed = PyList_Append(frames, frame);
    Py_DECREF(frame);
    return failed;
}

static PyObject *coalesce(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "coalesce(frame, packets) takes two arguments");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(args[1], "coalesce: packets must be a sequence of bytes");
    if (seq == NULL)
        return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    PyObject *frames = NULL;
    Packet *packets = PyMem_New(Packet, count ? count : 1);
    if (packets == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        if (!PyBytes_Check(items[i])) {
            PyErr_Format(PyExc_TypeError, "coalesce: packet %zd is %.100s, not bytes", i,
                         Py_TYPE(items[i])->tp_name);
            goto done;
        }
        packets[i] = (Packet){(const uint8_t *)PyBytes_AS_STRING(items[i]),
                              PyBytes_GET_SIZE(items[i])};
    }
    frames = PyList_New(0);
    if (frames == NULL)
        goto done;
    for (Py_ssize_t at = 0; at < count;) {
        Py_ssize_t taken = tcp_run(packets, count, at);
        if (!taken)
            taken = udp_run(packets, count, at);
        PyObject *data = taken > 1 ? run_frame(&packets[at], taken) : plain_frame(&packets[at]);
        taken = taken ? taken : 1;
        if (append_frame(frames, args[0], data, taken) < 0) {
            Py_CLEAR(frames);
            goto done;
        }
        at += taken;
    }
done:
    PyMem_Free(packets);
    Py_DECREF(seq);
    return frames;
}

static PyMethodDef methods[] = {
    {"coalesce", (PyCFunction)(void (*)(void))coalesce, METH_FASTCALL,
     "coalesce(frame, packets): the TUN writes that deliver packets, as gro.py's coalesce."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_esp_gro", "cryptoapi.esp.gro's coalescing in C.", 0, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__esp_gro(void) { return PyModule_Create(&module); }
