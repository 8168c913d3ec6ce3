/*
 * pfkey_preload.c: run an unmodified PF_KEY v2 client (RFC 2367) against cryptoapi's keyd.
 *
 * `cryptoapi pfkey-exec` builds this file into a shared library, puts it in LD_PRELOAD and
 * names keyd's Unix socket in CRYPTOAPI_KEYD_SOCKET. Without that variable the library
 * changes nothing. With it:
 *
 *  - socket(PF_KEY, SOCK_RAW, PF_KEY_V2) returns a Unix SOCK_SEQPACKET socket connected to
 *    keyd: one PF_KEY message per datagram, as keyd speaks it. SOCK_NONBLOCK and
 *    SOCK_CLOEXEC are kept. If keyd cannot be reached, socket() fails with connect()'s
 *    errno (ENOENT: no socket file; ECONNREFUSED: nobody listens) and one line on stderr.
 *    Another type or protocol fails as Linux's pfkey_create fails it.
 *  - A send to such a socket (send, sendto, sendmsg, write) returns only once keyd's answer
 *    is queued, or after REPLY_WAIT_MS. Linux's pfkey_sendmsg handles the message before it
 *    returns, so its reply is already queued; racoon relies on that, reading right after
 *    it sends REGISTER on a non-blocking socket. keyd answers asynchronously, so the library
 *    waits until the socket's queue grows (SIOCINQ on a Unix SOCK_SEQPACKET socket counts
 *    every queued byte, not only the first datagram's). A destination address is ignored,
 *    as pfkey_sendmsg ignores it (a connected SOCK_SEQPACKET socket would refuse it).
 *  - setsockopt(IP_IPSEC_POLICY or IPV6_IPSEC_POLICY) asking for a BYPASS policy (an IKE
 *    daemon exempting its own UDP 500/4500 sockets) succeeds without reaching the kernel:
 *    the kernel's IPsec is not the one in use (espd is), and a kernel without NET_KEY or
 *    CAP_NET_ADMIN refuses it.
 *  - Every other call, on every other file descriptor, goes to the C library untouched.
 *
 * The library never ends the program: a symbol it cannot find makes that call fail with
 * ENOSYS. Sockets are recognised by file descriptor and checked by inode on each send, so a
 * descriptor closed and reused behind the library's back (dup2, close_range) is not taken
 * for keyd's. Descriptors from MAX_TRACKED up still reach keyd, without the wait.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/ipsec.h>
#include <linux/pfkeyv2.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define SOCKET_ENV "CRYPTOAPI_KEYD_SOCKET"
#ifndef REPLY_WAIT_MS /* -DREPLY_WAIT_MS=0: no wait (the tests show a client then fails) */
#define REPLY_WAIT_MS 1000L /* the longest a send waits for keyd's answer */
#endif
#define QUEUED_PAUSE_NS 200000L /* between looks at a queue that already held data */
#define MAX_TRACKED 16384

typedef int (*socket_fn)(int, int, int);
typedef int (*setsockopt_fn)(int, int, int, const void *, socklen_t);
typedef int (*close_fn)(int);
typedef ssize_t (*send_fn)(int, const void *, size_t, int);
typedef ssize_t (*sendto_fn)(int, const void *, size_t, int, const struct sockaddr *,
                             socklen_t);
typedef ssize_t (*sendmsg_fn)(int, const struct msghdr *, int);
typedef ssize_t (*write_fn)(int, const void *, size_t);

static socket_fn real_socket;
static setsockopt_fn real_setsockopt;
static close_fn real_close;
static send_fn real_send;
static sendto_fn real_sendto;
static sendmsg_fn real_sendmsg;
static write_fn real_write;

/* The inode of the keyd socket at each descriptor (0: none). */
static struct {
    dev_t dev;
    ino_t ino;
} tracked[MAX_TRACKED];

/* The C library's definition of `name` (NULL if there is none). */
static void *next_symbol(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

/* The real function, looked up on first use (a constructor of another library may call us
 * before our own constructor has run). */
#define REAL(name) \
    (real_##name != NULL ? real_##name : (real_##name = (name##_fn)next_symbol(#name)))

__attribute__((constructor)) static void resolve_all(void)
{
    (void)REAL(socket);
    (void)REAL(setsockopt);
    (void)REAL(close);
    (void)REAL(send);
    (void)REAL(sendto);
    (void)REAL(sendmsg);
    (void)REAL(write);
}

static int missing_symbol(void)
{
    errno = ENOSYS;
    return -1;
}

/* The keyd socket path, or NULL when the library is to change nothing. */
static const char *keyd_path(void)
{
    const char *path = getenv(SOCKET_ENV);
    return path != NULL && path[0] != '\0' ? path : NULL;
}

/* One line on stderr, written whole (never through stdio: the program owns its buffers). */
static void say(const char *line)
{
    write_fn out = REAL(write);
    if (out != NULL)
        (void)out(STDERR_FILENO, line, strlen(line));
}

static void track(int fd)
{
    struct stat info;
    if (fd < 0 || fd >= MAX_TRACKED || fstat(fd, &info) != 0)
        return;
    tracked[fd].dev = info.st_dev;
    tracked[fd].ino = info.st_ino;
}

static void untrack(int fd)
{
    if (fd >= 0 && fd < MAX_TRACKED)
        tracked[fd].ino = 0;
}

/* Whether fd is still the keyd socket this library connected (its inode unchanged). */
static int is_keyd(int fd)
{
    struct stat info;
    if (fd < 0 || fd >= MAX_TRACKED || tracked[fd].ino == 0)
        return 0;
    if (fstat(fd, &info) == 0 && info.st_dev == tracked[fd].dev &&
        info.st_ino == tracked[fd].ino)
        return 1;
    untrack(fd);
    return 0;
}

/* socket()'s failure when keyd is not reachable: one line, and connect()'s errno. */
static int unreachable(const char *path, int code)
{
    char line[512];
    snprintf(line, sizeof line,
             "cryptoapi pfkey-exec: cannot reach keyd at %s: %s (is `cryptoapi keyd --socket"
             " %s` running?)\n",
             path, strerror(code), path);
    say(line);
    errno = code;
    return -1;
}

static int set_nonblocking(int fd)
{
    int flags = fcntl(fd, F_GETFL);
    return flags < 0 ? -1 : fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/* A Unix SOCK_SEQPACKET socket connected to keyd at `path`, in place of a PF_KEY socket.
 * It is connected blocking, so that socket() either succeeds or says why at once. */
static int connect_keyd(socket_fn make, const char *path, int type)
{
    struct sockaddr_un address;
    int fd;
    if (strlen(path) >= sizeof address.sun_path)
        return unreachable(path, ENAMETOOLONG);
    fd = make(AF_UNIX, SOCK_SEQPACKET | (type & SOCK_CLOEXEC), 0);
    if (fd < 0)
        return -1;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    memcpy(address.sun_path, path, strlen(path));
    if (connect(fd, (const struct sockaddr *)&address, sizeof address) != 0 ||
        ((type & SOCK_NONBLOCK) && set_nonblocking(fd) != 0)) {
        int code = errno;
        close(fd);
        return unreachable(path, code);
    }
    track(fd);
    return fd;
}

int socket(int domain, int type, int protocol)
{
    socket_fn make = REAL(socket);
    const char *path = keyd_path();
    if (make == NULL)
        return missing_symbol();
    if (domain != PF_KEY || path == NULL)
        return make(domain, type, protocol);
    /* pfkey_create: SOCK_RAW only, protocol PF_KEY_V2 only */
    if ((type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC)) != SOCK_RAW) {
        errno = ESOCKTNOSUPPORT;
        return -1;
    }
    if (protocol != PF_KEY_V2) {
        errno = EPROTONOSUPPORT;
        return -1;
    }
    return connect_keyd(make, path, type);
}

int close(int fd)
{
    close_fn shut = REAL(close);
    if (shut == NULL)
        return missing_symbol();
    untrack(fd);
    return shut(fd);
}

/* Bytes waiting on fd (every datagram of a Unix SOCK_SEQPACKET socket), or -1. */
static int queued(int fd)
{
    int count = 0;
    return ioctl(fd, FIONREAD, &count) == 0 ? count : -1;
}

static long elapsed_ms(const struct timespec *start)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - start->tv_sec) * 1000L + (now.tv_nsec - start->tv_nsec) / 1000000L;
}

/* Wait at most `left` ms for fd to become readable; 0 if keyd has gone (nothing will come). */
static int await_readable(int fd, long left)
{
    struct pollfd wanted = {.fd = fd, .events = POLLIN};
    if (poll(&wanted, 1, (int)left) < 0)
        return errno == EINTR;
    return !(wanted.revents & (POLLHUP | POLLERR | POLLNVAL));
}

static void pause_briefly(void)
{
    struct timespec pause = {.tv_sec = 0, .tv_nsec = QUEUED_PAUSE_NS};
    nanosleep(&pause, NULL);
}

/* Return once more is queued on fd than the `before` bytes there were before a send (keyd's
 * answer has arrived), keyd has gone, or REPLY_WAIT_MS has passed. errno is kept. */
static void await_answer(int fd, int before)
{
    int saved = errno;
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        int now = queued(fd);
        long left = REPLY_WAIT_MS - elapsed_ms(&start);
        if (now < 0 || now > before || left <= 0)
            break;
        before = now; /* another thread may have read: count from what is left */
        if (now > 0)
            pause_briefly(); /* poll would return at once for what was queued already */
        else if (!await_readable(fd, left))
            break;
    }
    errno = saved;
}

/* send() to keyd's socket, returning once its answer is queued (or the wait is over). */
static ssize_t send_to_keyd(send_fn forward, int fd, const void *buffer, size_t length,
                            int flags)
{
    int before = queued(fd);
    ssize_t sent = forward(fd, buffer, length, flags);
    if (sent >= 0)
        await_answer(fd, before);
    return sent;
}

ssize_t send(int fd, const void *buffer, size_t length, int flags)
{
    send_fn forward = REAL(send);
    if (forward == NULL)
        return missing_symbol();
    if (!is_keyd(fd))
        return forward(fd, buffer, length, flags);
    return send_to_keyd(forward, fd, buffer, length, flags);
}

ssize_t sendto(int fd, const void *buffer, size_t length, int flags,
               const struct sockaddr *to, socklen_t to_length)
{
    sendto_fn forward = REAL(sendto);
    send_fn forward_unaddressed = REAL(send);
    if (forward == NULL || forward_unaddressed == NULL)
        return missing_symbol();
    if (!is_keyd(fd))
        return forward(fd, buffer, length, flags, to, to_length);
    return send_to_keyd(forward_unaddressed, fd, buffer, length, flags);
}

ssize_t sendmsg(int fd, const struct msghdr *message, int flags)
{
    sendmsg_fn forward = REAL(sendmsg);
    struct msghdr unaddressed;
    int before;
    ssize_t sent;
    if (forward == NULL)
        return missing_symbol();
    if (message == NULL || !is_keyd(fd))
        return forward(fd, message, flags);
    unaddressed = *message;
    unaddressed.msg_name = NULL;
    unaddressed.msg_namelen = 0;
    before = queued(fd);
    sent = forward(fd, &unaddressed, flags);
    if (sent >= 0)
        await_answer(fd, before);
    return sent;
}

ssize_t write(int fd, const void *buffer, size_t length)
{
    write_fn forward = REAL(write);
    int before;
    ssize_t written;
    if (forward == NULL)
        return missing_symbol();
    if (!is_keyd(fd))
        return forward(fd, buffer, length);
    before = queued(fd);
    written = forward(fd, buffer, length);
    if (written >= 0)
        await_answer(fd, before);
    return written;
}

/* Whether a setsockopt() asks for an IPsec BYPASS policy on a socket (struct
 * sadb_x_policy, as libipsec's ipsec_set_policy("in bypass") builds it). */
static int is_bypass_request(int level, int name, const void *value, socklen_t length)
{
    struct sadb_x_policy policy;
    if (!((level == IPPROTO_IP && name == IP_IPSEC_POLICY) ||
          (level == IPPROTO_IPV6 && name == IPV6_IPSEC_POLICY)))
        return 0;
    if (value == NULL || length < sizeof policy)
        return 0;
    memcpy(&policy, value, sizeof policy);
    return policy.sadb_x_policy_exttype == SADB_X_EXT_POLICY &&
           policy.sadb_x_policy_type == IPSEC_POLICY_BYPASS;
}

int setsockopt(int fd, int level, int name, const void *value, socklen_t length)
{
    setsockopt_fn forward = REAL(setsockopt);
    if (forward == NULL)
        return missing_symbol();
    if (keyd_path() != NULL && is_bypass_request(level, name, value, length))
        return 0;
    return forward(fd, level, name, value, length);
}
