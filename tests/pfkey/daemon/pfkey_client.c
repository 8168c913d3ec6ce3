/*
 * pfkey_client.c: a PF_KEY v2 client (RFC 2367) written as racoon and setkey use the
 * kernel's PF_KEY sockets, for tests/pfkey/daemon/test_pfkey_exec.py (run under
 * `cryptoapi pfkey-exec`).
 *
 *   pfkey_client flow         REGISTER, PROMISC on a second socket, ADD, DUMP; each reply
 *                             read non-blocking right after its send; prints "ok: ..." lines
 *   pfkey_client unreachable  socket(PF_KEY) is expected to fail: prints its errno, exits 3
 *
 * Exit status 0 when every check held; 1 with a "FAIL: ..." line otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/ipsec.h>
#include <linux/pfkeyv2.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#define SPI 0x1001u
#define WAIT_MS 5000
#define ANY_SEQ UINT32_MAX /* a DUMP's parts count their own seq down to 0 */

static uint8_t auth_key[32];
static uint8_t enc_key[16];

struct message {
    uint8_t bytes[4096];
    size_t length;
};

static void fail(const char *what)
{
    printf("FAIL: %s (errno %d: %s)\n", what, errno, strerror(errno));
    exit(1);
}

static void check(int ok, const char *what)
{
    if (!ok) {
        printf("FAIL: %s\n", what);
        exit(1);
    }
}

/* Append `length` bytes (a multiple of 8) to the message. */
static void *append(struct message *message, size_t length)
{
    void *at = message->bytes + message->length;
    memset(at, 0, length);
    message->length += length;
    return at;
}

static void start(struct message *message, uint8_t type, uint8_t satype, uint32_t seq)
{
    struct sadb_msg *header;
    message->length = 0;
    header = append(message, sizeof *header);
    header->sadb_msg_version = PF_KEY_V2;
    header->sadb_msg_type = type;
    header->sadb_msg_satype = satype;
    header->sadb_msg_seq = seq;
    header->sadb_msg_pid = (uint32_t)getpid();
}

/* Set sadb_msg_len, in 64-bit words, once every extension is in. */
static void finish(struct message *message)
{
    ((struct sadb_msg *)message->bytes)->sadb_msg_len = (uint16_t)(message->length / 8);
}

static void add_sa(struct message *message)
{
    struct sadb_sa *sa = append(message, sizeof *sa);
    sa->sadb_sa_len = sizeof *sa / 8;
    sa->sadb_sa_exttype = SADB_EXT_SA;
    sa->sadb_sa_spi = htonl(SPI);
    sa->sadb_sa_replay = 32;
    sa->sadb_sa_state = SADB_SASTATE_MATURE;
    sa->sadb_sa_auth = SADB_X_AALG_SHA2_256HMAC;
    sa->sadb_sa_encrypt = SADB_X_EALG_AESCBC;
}

static void add_address(struct message *message, uint16_t exttype, const char *ip)
{
    size_t length = sizeof(struct sadb_address) + 16; /* sockaddr_in, padded to 8 */
    struct sadb_address *address = append(message, length);
    struct sockaddr_in *where = (struct sockaddr_in *)(address + 1);
    address->sadb_address_len = (uint16_t)(length / 8);
    address->sadb_address_exttype = exttype;
    address->sadb_address_prefixlen = 32;
    where->sin_family = AF_INET;
    inet_pton(AF_INET, ip, &where->sin_addr);
}

static void add_key(struct message *message, uint16_t exttype, const uint8_t *key, size_t size)
{
    size_t length = sizeof(struct sadb_key) + ((size + 7) / 8) * 8;
    struct sadb_key *header = append(message, length);
    header->sadb_key_len = (uint16_t)(length / 8);
    header->sadb_key_exttype = exttype;
    header->sadb_key_bits = (uint16_t)(size * 8);
    memcpy(header + 1, key, size);
}

static int open_pfkey(int type_flags)
{
    int fd = socket(PF_KEY, SOCK_RAW | type_flags, PF_KEY_V2);
    if (fd < 0)
        fail("socket(PF_KEY)");
    return fd;
}

/* The next message on fd, without waiting (the reply must already be queued). */
static struct sadb_msg *read_now(int fd, struct message *into, const char *what)
{
    ssize_t got = recv(fd, into->bytes, sizeof into->bytes, MSG_DONTWAIT);
    if (got < 0)
        fail(what);
    check((size_t)got >= sizeof(struct sadb_msg), "a reply shorter than sadb_msg");
    into->length = (size_t)got;
    return (struct sadb_msg *)into->bytes;
}

/* The next message on fd, waiting at most WAIT_MS. */
static struct sadb_msg *read_waiting(int fd, struct message *into, const char *what)
{
    struct pollfd wanted = {.fd = fd, .events = POLLIN};
    if (poll(&wanted, 1, WAIT_MS) != 1)
        fail(what);
    return read_now(fd, into, what);
}

/* The reply to the message of `type` and `seq` just sent on fd, read without waiting:
 * as on the kernel's sockets it is queued when the send returns, behind what others'
 * messages broadcast before it (skipped here, as racoon skips them). */
static struct sadb_msg *reply_now(int fd, struct message *into, uint8_t type, uint32_t seq,
                                  const char *what)
{
    for (;;) {
        struct sadb_msg *reply = read_now(fd, into, what);
        if (reply->sadb_msg_type != type || (seq != ANY_SEQ && reply->sadb_msg_seq != seq) ||
            reply->sadb_msg_pid != (uint32_t)getpid())
            continue;
        if (reply->sadb_msg_errno != 0) {
            printf("FAIL: %s: errno %u\n", what, reply->sadb_msg_errno);
            exit(1);
        }
        return reply;
    }
}

static void do_register(int fd)
{
    struct message message, reply;
    start(&message, SADB_REGISTER, SADB_SATYPE_ESP, 1);
    finish(&message);
    if (send(fd, message.bytes, message.length, 0) < 0)
        fail("send REGISTER");
    reply_now(fd, &reply, SADB_REGISTER, 1, "REGISTER answered at once");
    check(reply.length > sizeof(struct sadb_msg), "REGISTER reply lists no algorithms");
    printf("ok: REGISTER answered at once (%zu bytes)\n", reply.length);
}

/* PROMISC on, with sendmsg; the echo is read at once. */
static void do_promisc(int fd)
{
    struct message message, reply;
    struct iovec part;
    struct msghdr header;
    start(&message, SADB_X_PROMISC, 1, 2);
    finish(&message);
    part.iov_base = message.bytes;
    part.iov_len = message.length;
    memset(&header, 0, sizeof header);
    header.msg_iov = &part;
    header.msg_iovlen = 1;
    if (sendmsg(fd, &header, 0) < 0)
        fail("sendmsg PROMISC");
    reply_now(fd, &reply, SADB_X_PROMISC, 2, "PROMISC echoed at once");
    printf("ok: PROMISC echoed at once\n");
}

/* ADD, with write() as a client may send it. */
static void do_add(int fd)
{
    struct message message, reply;
    start(&message, SADB_ADD, SADB_SATYPE_ESP, 3);
    add_sa(&message);
    add_address(&message, SADB_EXT_ADDRESS_SRC, "10.0.0.1");
    add_address(&message, SADB_EXT_ADDRESS_DST, "10.0.0.2");
    add_key(&message, SADB_EXT_KEY_AUTH, auth_key, sizeof auth_key);
    add_key(&message, SADB_EXT_KEY_ENCRYPT, enc_key, sizeof enc_key);
    finish(&message);
    if (write(fd, message.bytes, message.length) < 0)
        fail("write ADD");
    reply_now(fd, &reply, SADB_ADD, 3, "ADD answered at once");
    printf("ok: ADD answered at once\n");
}

/* DUMP, with sendto() and an address (ignored, as the kernel ignores it): the first part
 * is there at once, the rest as it comes; the SA just added is in it. */
static void do_dump(int fd)
{
    struct message message, reply;
    struct sockaddr_in nowhere = {.sin_family = AF_INET};
    const struct sadb_msg *part;
    int found = 0;
    start(&message, SADB_DUMP, SADB_SATYPE_ESP, 4);
    finish(&message);
    if (sendto(fd, message.bytes, message.length, 0, (struct sockaddr *)&nowhere,
               sizeof nowhere) < 0)
        fail("sendto DUMP");
    part = reply_now(fd, &reply, SADB_DUMP, ANY_SEQ, "DUMP answered at once");
    for (;;) {
        const struct sadb_sa *sa = (const struct sadb_sa *)(part + 1);
        check(part->sadb_msg_type == SADB_DUMP && part->sadb_msg_errno == 0, "DUMP part");
        found += reply.length >= sizeof *part + sizeof *sa &&
                 sa->sadb_sa_exttype == SADB_EXT_SA && ntohl(sa->sadb_sa_spi) == SPI;
        if (part->sadb_msg_seq == 0)
            break;
        part = read_waiting(fd, &reply, "read the rest of the DUMP");
    }
    check(found == 1, "DUMP lists the SA added");
    printf("ok: DUMP lists SPI 0x%x\n", SPI);
}

/* What the promiscuous socket saw of the other's messages: the ADD and the DUMP, as sent. */
static void check_monitor(int fd)
{
    struct message copy;
    int seen_add = 0, seen_dump = 0;
    while (!(seen_add && seen_dump)) {
        const struct sadb_msg *header = read_waiting(fd, &copy, "promiscuous copies");
        seen_add |= header->sadb_msg_type == SADB_ADD && header->sadb_msg_seq == 3;
        seen_dump |= header->sadb_msg_type == SADB_DUMP && copy.length == sizeof *header;
    }
    printf("ok: the promiscuous socket saw the ADD and the DUMP request\n");
}

/* An IKE daemon's bypass policy on its own UDP socket succeeds; other options pass. */
static void do_bypass(void)
{
    struct sadb_x_policy policy = {
        .sadb_x_policy_len = sizeof policy / 8,
        .sadb_x_policy_exttype = SADB_X_EXT_POLICY,
        .sadb_x_policy_type = IPSEC_POLICY_BYPASS,
        .sadb_x_policy_dir = IPSEC_DIR_INBOUND,
    };
    int yes = 1;
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0)
        fail("socket(AF_INET)");
    if (setsockopt(fd, IPPROTO_IP, IP_IPSEC_POLICY, &policy, sizeof policy) != 0)
        fail("setsockopt IP_IPSEC_POLICY bypass");
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes) != 0)
        fail("setsockopt SO_REUSEADDR");
    close(fd);
    printf("ok: IP_IPSEC_POLICY bypass accepted\n");
}

static int flow(void)
{
    int client = open_pfkey(0);
    int monitor = open_pfkey(SOCK_NONBLOCK | SOCK_CLOEXEC);
    /* racoon makes its PF_KEY socket non-blocking with fcntl */
    if (fcntl(client, F_SETFL, fcntl(client, F_GETFL) | O_NONBLOCK) != 0)
        fail("fcntl O_NONBLOCK");
    do_register(client);
    do_promisc(monitor);
    do_add(client);
    do_dump(client);
    check_monitor(monitor);
    do_bypass();
    close(monitor);
    close(client);
    printf("ok: done\n");
    return 0;
}

static int unreachable(void)
{
    int fd = socket(PF_KEY, SOCK_RAW, PF_KEY_V2);
    if (fd >= 0) {
        printf("FAIL: socket(PF_KEY) succeeded without keyd\n");
        return 1;
    }
    printf("socket failed: errno %d (%s)\n", errno, strerror(errno));
    return 3;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    for (size_t i = 0; i < sizeof auth_key; i++)
        auth_key[i] = (uint8_t)i;
    for (size_t i = 0; i < sizeof enc_key; i++)
        enc_key[i] = (uint8_t)(100 + i);
    if (argc == 2 && strcmp(argv[1], "flow") == 0)
        return flow();
    if (argc == 2 && strcmp(argv[1], "unreachable") == 0)
        return unreachable();
    fprintf(stderr, "usage: %s flow|unreachable\n", argv[0]);
    return 2;
}
