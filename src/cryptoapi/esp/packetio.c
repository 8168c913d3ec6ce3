/* packetio.c: espd's reads, receives and sends, each one system call from C.
 *
 * What os.read, socket.recvmsg and socket.sendmsg do for espd, without the Python around
 * them: an empty queue is None rather than a BlockingIOError (every turn ends on one),
 * addresses stay packed bytes (no inet_ntop and inet_pton per packet), and the control
 * messages are built and read here. Any other error raises OSError with the errno, as the
 * socket module's calls do; EINTR runs the signal handlers and retries (PEP 475).
 *
 *   read_frame(fd, size): one read of at most size bytes, or None.
 *   receive(fd, family, size, port): one recvmsg, as sockets.Received's fields
 *     (None, payload, src, dst, sport, port, segment), or None. dst is the packet's own
 *     destination (IP_PKTINFO's ipi_addr, IPV6_PKTINFO's ipi6_addr; zeros without one),
 *     segment the UDP_GRO size (0: one datagram).
 *   send(fd, family, payloads, src, dst, port, segment): one sendmsg of the payloads
 *     (one iovec each) from src (IP_PKTINFO's ipi_spec_dst, IPV6_PKTINFO's ipi6_addr) to
 *     dst and port; with segment > 0, a UDP_SEGMENT message of that size.
 *
 * The Python module sockets.py is the reference and the docs (the tests send and receive
 * through both); espd takes these where they build.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SOL_UDP
#define SOL_UDP 17
#endif
#define UDP_SEGMENT_ 103 /* <linux/udp.h> */
#define UDP_GRO_ 104
#define MAX_IOV 64

/* Whether to try again after errno (EINTR: once the signal handlers ran); -1 if a handler
 * raised. */
static int again(void) {
    if (errno != EINTR)
        return 0;
    return PyErr_CheckSignals() < 0 ? -1 : 1;
}

/* After a read or receive into buffer failed and is not tried again (retry, from again()):
 * None if nothing was waiting (EAGAIN), else NULL with the error set. Releases buffer. */
static PyObject *empty_or_error(PyObject *buffer, int retry) {
    int code = errno;
    Py_DECREF(buffer);
    if (retry < 0)
        return NULL;
    if (code == EAGAIN || code == EWOULDBLOCK)
        Py_RETURN_NONE;
    errno = code;
    return PyErr_SetFromErrno(PyExc_OSError);
}

/* An int argument (-1 with an error set if it is not one). */
static int as_int(PyObject *number) {
    long value = PyLong_AsLong(number);
    if (value == -1 && PyErr_Occurred())
        return -1;
    if (value < INT_MIN || value > INT_MAX) {
        PyErr_SetString(PyExc_OverflowError, "an int");
        return -1;
    }
    return (int)value;
}

static int address_size(int family) {
    if (family == AF_INET)
        return 4;
    if (family == AF_INET6)
        return 16;
    PyErr_SetString(PyExc_ValueError, "family: AF_INET or AF_INET6");
    return 0;
}

static PyObject *io_read_frame(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    int fd;
    Py_ssize_t size;
    if (nargs != 2 || (fd = as_int(args[0])) < 0 ||
        (size = PyLong_AsSsize_t(args[1])) < 1) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "read_frame(fd, size): a descriptor, a size");
        return NULL;
    }
    PyObject *frame = PyBytes_FromStringAndSize(NULL, size);
    if (!frame)
        return NULL;
    for (;;) {
        ssize_t got = read(fd, PyBytes_AS_STRING(frame), (size_t)size);
        if (got >= 0) {
            _PyBytes_Resize(&frame, got);
            return frame;
        }
        int retry = again();
        if (retry > 0)
            continue;
        return empty_or_error(frame, retry);
    }
}

/* The destination and GRO segment size the control messages of msg hold. */
static void ancillary(struct msghdr *msg, int family, const uint8_t **dst, int *segment) {
    for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
        if (family == AF_INET && c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO)
            *dst = (const uint8_t *)&((struct in_pktinfo *)CMSG_DATA(c))->ipi_addr;
        else if (family == AF_INET6 && c->cmsg_level == IPPROTO_IPV6 &&
                 c->cmsg_type == IPV6_PKTINFO)
            *dst = (const uint8_t *)&((struct in6_pktinfo *)CMSG_DATA(c))->ipi6_addr;
        else if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO_)
            memcpy(segment, CMSG_DATA(c), sizeof *segment);
    }
}

static PyObject *io_receive(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    int fd, family, length;
    Py_ssize_t size;
    if (nargs != 4 || (fd = as_int(args[0])) < 0 || !(family = as_int(args[1])) ||
        (size = PyLong_AsSsize_t(args[2])) < 1 || !PyLong_Check(args[3])) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "receive(fd, family, size, port)");
        return NULL;
    }
    if (!(length = address_size(family)))
        return NULL;
    PyObject *payload = PyBytes_FromStringAndSize(NULL, size);
    if (!payload)
        return NULL;
    struct sockaddr_storage from;
    union {
        char bytes[CMSG_SPACE(sizeof(struct in6_pktinfo)) + CMSG_SPACE(sizeof(int)) + 64];
        struct cmsghdr align;
    } control;
    struct iovec iov = {PyBytes_AS_STRING(payload), (size_t)size};
    struct msghdr msg;
    ssize_t got;
    for (;;) {
        memset(&msg, 0, sizeof msg);
        msg.msg_name = &from;
        msg.msg_namelen = sizeof from;
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.bytes;
        msg.msg_controllen = sizeof control.bytes;
        if ((got = recvmsg(fd, &msg, 0)) >= 0)
            break;
        int retry = again();
        if (retry > 0)
            continue;
        return empty_or_error(payload, retry);
    }
    if (_PyBytes_Resize(&payload, got) < 0)
        return NULL;
    static const uint8_t none[16];
    const uint8_t *dst = none, *src;
    int segment = 0;
    unsigned sport;
    ancillary(&msg, family, &dst, &segment);
    if (family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)&from;
        src = (const uint8_t *)&in->sin_addr;
        sport = ntohs(in->sin_port);
    } else {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&from;
        src = (const uint8_t *)&in6->sin6_addr;
        sport = ntohs(in6->sin6_port);
    }
    return Py_BuildValue("(ONy#y#IOi)", Py_None, payload, src, (Py_ssize_t)length, dst,
                         (Py_ssize_t)length, sport, args[3], segment);
}

/* The control messages of a send from src (and, with segment > 0, UDP_SEGMENT); their
 * length. */
static size_t source_and_segment(char *control, int family, const char *src, int segment) {
    struct msghdr msg = {.msg_control = control,
                         .msg_controllen = CMSG_SPACE(sizeof(struct in6_pktinfo)) +
                                           CMSG_SPACE(sizeof(uint16_t))};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    size_t used;
    if (family == AF_INET) {
        struct in_pktinfo info = {0};
        memcpy(&info.ipi_spec_dst, src, 4);
        c->cmsg_level = IPPROTO_IP;
        c->cmsg_type = IP_PKTINFO;
        c->cmsg_len = CMSG_LEN(sizeof info);
        memcpy(CMSG_DATA(c), &info, sizeof info);
        used = CMSG_SPACE(sizeof info);
    } else {
        struct in6_pktinfo info = {0};
        memcpy(&info.ipi6_addr, src, 16);
        c->cmsg_level = IPPROTO_IPV6;
        c->cmsg_type = IPV6_PKTINFO;
        c->cmsg_len = CMSG_LEN(sizeof info);
        memcpy(CMSG_DATA(c), &info, sizeof info);
        used = CMSG_SPACE(sizeof info);
    }
    if (segment > 0) {
        uint16_t size = (uint16_t)segment;
        c = (struct cmsghdr *)(control + used);
        c->cmsg_level = SOL_UDP;
        c->cmsg_type = UDP_SEGMENT_;
        c->cmsg_len = CMSG_LEN(sizeof size);
        memcpy(CMSG_DATA(c), &size, sizeof size);
        used += CMSG_SPACE(sizeof size);
    }
    return used;
}

/* The address bytes of an argument, which must be bytes of the family's length. */
static const char *address_of(PyObject *arg, int length, const char *what) {
    if (!PyBytes_Check(arg) || PyBytes_GET_SIZE(arg) != length) {
        PyErr_Format(PyExc_ValueError, "%s: %d packed bytes", what, length);
        return NULL;
    }
    return PyBytes_AS_STRING(arg);
}

static PyObject *io_send(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    int fd, family, length, port, segment;
    const char *src, *dst;
    if (nargs != 7 || (fd = as_int(args[0])) < 0 || !(family = as_int(args[1])) ||
        (port = as_int(args[5])) < 0 || port > 0xFFFF ||
        (segment = as_int(args[6])) < 0 || segment > 0xFFFF) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError,
                            "send(fd, family, payloads, src, dst, port, segment)");
        return NULL;
    }
    if (!(length = address_size(family)) || !(src = address_of(args[3], length, "src")) ||
        !(dst = address_of(args[4], length, "dst")))
        return NULL;
    PyObject *payloads = PySequence_Fast(args[2], "payloads: a sequence");
    if (!payloads)
        return NULL;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(payloads);
    struct iovec iov[MAX_IOV];
    if (count < 1 || count > MAX_IOV) {
        Py_DECREF(payloads);
        return PyErr_Format(PyExc_ValueError, "payloads: 1 to %d of them", MAX_IOV);
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *payload = PySequence_Fast_GET_ITEM(payloads, i);
        if (!PyBytes_Check(payload)) {
            Py_DECREF(payloads);
            return PyErr_Format(PyExc_TypeError, "payloads: bytes");
        }
        iov[i].iov_base = PyBytes_AS_STRING(payload);
        iov[i].iov_len = (size_t)PyBytes_GET_SIZE(payload);
    }
    struct sockaddr_in in = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    struct sockaddr_in6 in6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
    union {
        char bytes[CMSG_SPACE(sizeof(struct in6_pktinfo)) + CMSG_SPACE(sizeof(uint16_t))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof control);
    struct msghdr msg = {.msg_iov = iov, .msg_iovlen = (size_t)count,
                         .msg_control = control.bytes};
    msg.msg_controllen = source_and_segment(control.bytes, family, src, segment);
    if (family == AF_INET) {
        memcpy(&in.sin_addr, dst, 4);
        msg.msg_name = &in;
        msg.msg_namelen = sizeof in;
    } else {
        memcpy(&in6.sin6_addr, dst, 16);
        msg.msg_name = &in6;
        msg.msg_namelen = sizeof in6;
    }
    int retry;
    while (sendmsg(fd, &msg, 0) < 0) {
        if ((retry = again()) > 0)
            continue;
        Py_DECREF(payloads);
        return retry < 0 ? NULL : PyErr_SetFromErrno(PyExc_OSError);
    }
    Py_DECREF(payloads);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"read_frame", (PyCFunction)(void (*)(void))io_read_frame, METH_FASTCALL,
     "read_frame(fd, size): one read, or None if nothing is waiting."},
    {"receive", (PyCFunction)(void (*)(void))io_receive, METH_FASTCALL,
     "receive(fd, family, size, port): one recvmsg as Received's fields, or None."},
    {"send", (PyCFunction)(void (*)(void))io_send, METH_FASTCALL,
     "send(fd, family, payloads, src, dst, port, segment): one sendmsg."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_esp_packetio", "espd's reads, receives and sends in C.", 0,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__esp_packetio(void) { return PyModule_Create(&module); }
