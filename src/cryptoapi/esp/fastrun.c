/* fastrun.c: the data path's fast runs in C, for espd's every turn.
 *
 * Two functions, each the twin of a Datapath method, which stays the reference and the
 * doc (the tests run every fast path test on both):
 *
 *   outputs(datapath, packets, start, outs) is Datapath._fast_outputs: from packets[start]
 *     on, each run of one flow that its SA's fast path takes, appended to outs as
 *     Outbound tuples; the index of the first packet left to the readable path.
 *   inputs(datapath, payloads, start, outer, inners) is Datapath._fast_open_run:
 *     payloads[start] and the packets after it of the same SA (outer: their outer source,
 *     destination and TOS) opened, the packets they hold appended to inners; how many
 *     were taken (0: the readable path's).
 *
 * Why C: an idle tunnel's packet finds espd's caches cold, and there every Python frame
 * and bytecode the packet runs through costs a cache miss or many. Here the flow is read,
 * planned, counted and framed in one C frame around the SA's own calls (runs.seal_run,
 * runs.open_run), reading the same attributes the methods read, in the same order of
 * checks. What is rare stays in Python and is called from here: a first packet's plan or
 * verdict, a packet the window takes out of order, a drop's count and log line.
 *
 * Locking: the Python method takes state.lock to reserve sequence numbers. This runs with
 * the GIL held from the check to the update, so no Python thread can come between; a
 * thread that holds the lock (inside its own reservation) makes this stop, and the
 * readable path, which waits for the lock, takes the packet.
 *
 * bind(outbound, usable, esp, fastpath, flow, causes) is called once after loading: the
 * Outbound type, the usable SA states, SADB_SATYPE_ESP, the fastpath module (its seal and
 * open_esp are looked up per use, as the methods do), ip.flow, and fastpath.RUN_CAUSES.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#define IPV4_HEADER 20
#define IPV6_HEADER 40
#define ESP_HEADER 8
#define OFFSET_MASK 0x1FFF
#define IPPROTO_IPIP_ 4
#define IPPROTO_IPV6_ 41
#define IPPROTO_NONE_ 59
#define ECN_MASK 0x03

static PyObject *Outbound, *Usable, *Esp, *Fastpath, *FlowOf, *Causes;
static PyObject *Empty;

/* Attribute and counter names, interned once (names as the Python methods spell them). */
#define NAMES(X)                                                                              \
    X(_sad) X(_spd) X(_generations) X(generation) X(_plans) X(_counters) X(_states)          \
    X(_in_verdicts) X(by_key) X(fast) X(sa) X(state) X(used) X(limit_packets)              \
    X(limit_bytes) X(allocations) X(nbytes) X(lock) X(locked) X(seq) X(seq_limit)            \
    X(iv_salt) X(runs) X(random_iv) X(outbound) X(seal_run) X(open_run) X(seal) X(open_esp)  \
    X(tunnel) X(replay) X(top) X(bitmap) X(_mask) X(size) X(_decapsulated) X(_esp_dropped) X(ident)      \
    X(EspOutPackets) X(EspOutBytes) X(EspInPackets) X(EspInBytes) X(EspInDummy)
#define DECLARE(name) static PyObject *S_##name;
NAMES(DECLARE)

static unsigned be16(const uint8_t *p) { return (unsigned)p[0] << 8 | p[1]; }

/* -- the flow (ip.flow's selector fields) ---------------------------------------------- */

typedef struct {
    int family;
    const uint8_t *src, *dst;
    Py_ssize_t address;
    unsigned proto, sport, dport;
} Flow;

/* ip._ports: the ports of the protocols that have them, an ICMP's type and code. */
static void ports(const uint8_t *at, unsigned proto, Flow *flow) {
    switch (proto) {
    case 6: case 17: case 33: case 132: case 136:
        flow->sport = be16(at);
        flow->dport = be16(at + 2);
        return;
    case 1: case 58:
        flow->sport = at[0];
        flow->dport = at[1];
        return;
    default:
        flow->sport = flow->dport = 0;
    }
}

static int extension_header(unsigned proto) {
    switch (proto) {
    case 0: case 43: case 44: case 60: case 135: case 139: case 140: case 253: case 254:
        return 1;
    default:
        return 0;
    }
}

/* What flow_of found: the addresses from src on (address bytes each), the protocol, no
 * ports yet. */
static void found(Flow *flow, int family, const uint8_t *src, Py_ssize_t address,
                  unsigned proto) {
    flow->family = family;
    flow->src = src;
    flow->dst = src + address;
    flow->address = address;
    flow->proto = proto;
    flow->sport = flow->dport = 0;
}

/* ip.flow: whether p is a plain, whole IP packet, and its selector fields. */
static int flow_of(const uint8_t *p, Py_ssize_t size, Flow *flow) {
    if (size >= IPV4_HEADER && p[0] == 0x45) {
        if (be16(p + 2) != size)
            return 0;
        found(flow, AF_INET, p + 12, 4, p[9]);
        if (size >= IPV4_HEADER + 4 && !(be16(p + 6) & OFFSET_MASK))
            ports(p + IPV4_HEADER, flow->proto, flow);
        return 1;
    }
    if (size >= IPV6_HEADER && p[0] >> 4 == 6) {
        Py_ssize_t length = be16(p + 4);
        if (length != size - IPV6_HEADER || extension_header(p[6]))
            return 0;
        found(flow, AF_INET6, p + 8, 16, p[6]);
        if (length >= 4)
            ports(p + IPV6_HEADER, flow->proto, flow);
        return 1;
    }
    return 0;
}

/* flow[:6], the key of Datapath._plans and (with the state's id) of _in_verdicts. */
static PyObject *flow_key(const Flow *f) {
    return Py_BuildValue("(iy#y#III)", f->family, f->src, f->address, f->dst, f->address,
                         f->proto, f->sport, f->dport);
}

/* ip.flow_parts: the spans that, with a stated length that is the packet's own, make a
 * packet the same flow with the same header fields as the one they were read from. */
typedef struct {
    Py_ssize_t a, b, c, d, e, f, length_at, extra;
} Parts;

static Parts parts_of(const uint8_t *first) {
    if (first[0] == 0x45)
        return (Parts){0, 2, 6, 10, 12, IPV4_HEADER + 4, 2, 0};
    return (Parts){0, 4, 6, 8, 8, IPV6_HEADER + 4, 4, IPV6_HEADER};
}

static int same_flow(PyObject *packet, PyObject *first, const Parts *s) {
    const uint8_t *p = (const uint8_t *)PyBytes_AS_STRING(packet);
    const uint8_t *q = (const uint8_t *)PyBytes_AS_STRING(first);
    Py_ssize_t size = PyBytes_GET_SIZE(packet);
    return size >= s->f && !memcmp(p + s->e, q + s->e, (size_t)(s->f - s->e)) &&
           !memcmp(p + s->c, q + s->c, (size_t)(s->d - s->c)) &&
           !memcmp(p + s->a, q + s->a, (size_t)(s->b - s->a)) &&
           be16(p + s->length_at) + s->extra == size;
}

/* -- small helpers over Python objects ------------------------------------------------- */

static int as_double(PyObject *owner, PyObject *name, double *value) {
    PyObject *found = PyObject_GetAttr(owner, name);
    if (!found)
        return 0;
    *value = PyFloat_AsDouble(found);
    Py_DECREF(found);
    return !(*value == -1.0 && PyErr_Occurred());
}

static int as_u64(PyObject *owner, PyObject *name, uint64_t *value) {
    PyObject *found = PyObject_GetAttr(owner, name);
    if (!found)
        return 0;
    *value = PyLong_AsUnsignedLongLong(found);
    Py_DECREF(found);
    return !(*value == (uint64_t)-1 && PyErr_Occurred());
}

/* Whether owner.name is true (-1: an error). */
static int is_true(PyObject *owner, PyObject *name) {
    PyObject *found = PyObject_GetAttr(owner, name);
    if (!found)
        return -1;
    int truth = PyObject_IsTrue(found);
    Py_DECREF(found);
    return truth;
}

/* Whether owner.name is other than its twin in the datapath's _generations (-1: error). */
static int changed(PyObject *owner, PyObject *seen) {
    PyObject *now = PyObject_GetAttr(owner, S_generation);
    if (!now)
        return -1;
    int moved = PyObject_RichCompareBool(now, seen, Py_NE);
    Py_DECREF(now);
    return moved;
}

/* owner.name += delta (an attribute, or with a dict a key). */
static int add(PyObject *owner, PyObject *name, long long delta) {
    int dict = PyDict_Check(owner);
    PyObject *was = dict ? PyDict_GetItemWithError(owner, name) : PyObject_GetAttr(owner, name);
    if (!was)
        return 0;
    if (dict)
        Py_INCREF(was);
    PyObject *by = PyLong_FromLongLong(delta), *sum = by ? PyNumber_Add(was, by) : NULL;
    Py_DECREF(was);
    Py_XDECREF(by);
    if (!sum)
        return 0;
    int failed = dict ? PyDict_SetItem(owner, name, sum) : PyObject_SetAttr(owner, name, sum);
    Py_DECREF(sum);
    return !failed;
}

/* The SA's usage and the data path's counters after count packets of nbytes. */
static int count_use(PyObject *datapath, PyObject *sa, long long count, long long nbytes,
                     PyObject *packets, PyObject *octets) {
    PyObject *counters = PyObject_GetAttr(datapath, S__counters);
    if (!counters)
        return 0;
    int done = add(sa, S_nbytes, nbytes) && add(sa, S_allocations, count) &&
               add(counters, packets, count) && add(counters, octets, nbytes);
    Py_DECREF(counters);
    return done;
}

/* Whether the SAD or SPD changed since the data path's plans and verdicts (-1: error). */
static int generations_moved(PyObject *datapath) {
    PyObject *sad = PyObject_GetAttr(datapath, S__sad);
    PyObject *spd = sad ? PyObject_GetAttr(datapath, S__spd) : NULL;
    PyObject *seen = spd ? PyObject_GetAttr(datapath, S__generations) : NULL;
    int moved = -1;
    if (seen && PyTuple_Check(seen) && PyTuple_GET_SIZE(seen) == 2) {
        moved = changed(sad, PyTuple_GET_ITEM(seen, 0));
        if (moved == 0)
            moved = changed(spd, PyTuple_GET_ITEM(seen, 1));
    } else if (seen) {
        PyErr_SetString(PyExc_TypeError, "_generations: a pair");
    }
    Py_XDECREF(sad);
    Py_XDECREF(spd);
    Py_XDECREF(seen);
    return moved;
}

/* Whether the SA record is usable and used (-1: error). */
static int usable_and_used(PyObject *sa) {
    PyObject *state = PyObject_GetAttr(sa, S_state);
    if (!state)
        return -1;
    int usable = PySequence_Contains(Usable, state);
    Py_DECREF(state);
    return usable == 1 ? is_true(sa, S_used) : usable;
}

/* -- outbound ---------------------------------------------------------------------------- */

/* Datapath._same_flow: how many of items[at] (whose flow was read) and the packets after
 * it share its flow, fewer than room in all; and their bytes. */
static Py_ssize_t run_length(PyObject *const *items, Py_ssize_t n, Py_ssize_t at, double room,
                             long long *total) {
    double limit = room - 1 < (double)(n - at) ? room - 1 : (double)(n - at);
    Py_ssize_t most = limit < 1 ? 0 : (Py_ssize_t)limit;
    *total = 0;
    if (!most)
        return 0;
    PyObject *first = items[at];
    Parts parts = parts_of((const uint8_t *)PyBytes_AS_STRING(first));
    Py_ssize_t count = 1;
    *total = PyBytes_GET_SIZE(first);
    while (count < most) {
        PyObject *next = items[at + count];
        if (!PyBytes_Check(next) || !same_flow(next, first, &parts))
            break;
        *total += PyBytes_GET_SIZE(next);
        count++;
    }
    return count;
}

/* The state of the plan for packet's flow, if the fast path may take it: a new
 * reference, or NULL (with an error set, or none: the readable path's). */
static PyObject *planned_state(PyObject *datapath, PyObject *packet) {
    Flow flow;
    if (!PyBytes_Check(packet) ||
        !flow_of((const uint8_t *)PyBytes_AS_STRING(packet), PyBytes_GET_SIZE(packet), &flow))
        return NULL;
    int moved = generations_moved(datapath);
    if (moved)
        return NULL;
    PyObject *plans = PyObject_GetAttr(datapath, S__plans), *key = flow_key(&flow);
    PyObject *plan = plans && key ? PyDict_GetItemWithError(plans, key) : NULL;
    PyObject *state = NULL;
    if (plan) {
        if (PyTuple_Check(plan) && PyTuple_GET_SIZE(plan) > 1)
            state = PyTuple_GET_ITEM(plan, 1);  // _Plan.state
        else
            PyErr_SetString(PyExc_TypeError, "a plan: a _Plan");
    }
    Py_XINCREF(state);
    Py_XDECREF(plans);
    Py_XDECREF(key);
    if (state == Py_None)
        Py_CLEAR(state);
    return state;
}

/* The run's ESP packets by the SA's own call (runs.seal_run), or by fastpath.seal each. */
static PyObject *seal(PyObject *fast, PyObject *const *items, Py_ssize_t at, Py_ssize_t count,
                      uint64_t seq, PyObject *salt) {
    PyObject *runs = PyObject_GetAttr(fast, S_runs), *sealed = NULL, *ivs = NULL;
    PyObject *run = NULL, *number = NULL;
    if (!runs)
        return NULL;
    if (runs != Py_None) {
        PyObject *random_iv = PyObject_GetAttr(fast, S_random_iv);
        if (!random_iv)
            goto done;
        if (random_iv == Py_None) {
            ivs = Py_NewRef(Empty);
        } else {
            PyObject *many = PyLong_FromSsize_t(count);
            ivs = many ? PyObject_CallOneArg(random_iv, many) : NULL;
            Py_XDECREF(many);
        }
        Py_DECREF(random_iv);
        run = PyList_New(count);
        number = PyLong_FromUnsignedLongLong(seq);
        if (!ivs || !run || !number)
            goto done;
        for (Py_ssize_t i = 0; i < count; i++)
            PyList_SET_ITEM(run, i, Py_NewRef(items[at + i]));
        PyObject *args[] = {runs, run, number, salt, ivs, Empty};
        sealed = PyObject_VectorcallMethod(S_seal_run, args, 6 | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                           NULL);
        goto done;
    }
    PyObject *one = PyObject_GetAttr(Fastpath, S_seal);
    PyObject *flow = one ? PyObject_CallOneArg(FlowOf, items[at]) : NULL;
    PyObject *kwnames = flow ? PyTuple_Pack(1, S_ident) : NULL;
    PyObject *ident = kwnames ? PyLong_FromLong(-1) : NULL;
    sealed = ident ? PyList_New(count) : NULL;
    for (Py_ssize_t i = 0; sealed && i < count; i++) {
        PyObject *numbered = PyLong_FromUnsignedLongLong(seq + (uint64_t)i);
        PyObject *args[] = {fast, numbered, salt, items[at + i], flow, ident};
        PyObject *esp = numbered ? PyObject_Vectorcall(one, args, 5, kwnames) : NULL;
        Py_XDECREF(numbered);
        if (!esp)
            Py_CLEAR(sealed);
        else
            PyList_SET_ITEM(sealed, i, esp);
    }
    Py_XDECREF(one);
    Py_XDECREF(flow);
    Py_XDECREF(kwnames);
    Py_XDECREF(ident);
done:
    Py_DECREF(runs);
    Py_XDECREF(ivs);
    Py_XDECREF(run);
    Py_XDECREF(number);
    return sealed;
}

/* Outbound(*outbound, esp) for each ESP packet, appended to outs. */
static int append_outbounds(PyObject *outs, PyObject *fast, PyObject *esps) {
    PyObject *outbound = PyObject_GetAttr(fast, S_outbound);
    int done = outbound && PyTuple_Check(outbound) && PyTuple_GET_SIZE(outbound) == 5;
    if (outbound && !done)
        PyErr_SetString(PyExc_TypeError, "FastSa.outbound: five fields");
    Py_ssize_t size = PyList_GET_SIZE(esps);
    for (Py_ssize_t i = 0; done && i < size; i++) {
        PyObject *out = ((PyTypeObject *)Outbound)->tp_alloc((PyTypeObject *)Outbound, 6);
        if (!out) {
            done = 0;
            break;
        }
        for (Py_ssize_t field = 0; field < 5; field++)
            PyTuple_SET_ITEM(out, field, Py_NewRef(PyTuple_GET_ITEM(outbound, field)));
        PyTuple_SET_ITEM(out, 5, Py_NewRef(PyList_GET_ITEM(esps, i)));
        done = PyList_Append(outs, out) == 0;
        Py_DECREF(out);
    }
    Py_XDECREF(outbound);
    return done;
}

/* Datapath._fast_run (outer headers left to the socket) for items[at]: how many packets
 * it took (0: none, the readable path's; -1: an error). */
static Py_ssize_t fast_run(PyObject *datapath, PyObject *const *items, Py_ssize_t n,
                           Py_ssize_t at, PyObject *outs) {
    PyObject *state = planned_state(datapath, items[at]);
    if (!state)
        return PyErr_Occurred() ? -1 : 0;
    PyObject *fast = PyObject_GetAttr(state, S_fast), *sa = NULL, *lock = NULL;
    PyObject *salt = NULL, *esps = NULL, *next = NULL;
    Py_ssize_t taken = -1, count;
    double limit_packets, limit_bytes, allocations, nbytes;
    long long total;
    uint64_t seq, seq_limit;
    if (!fast)
        goto done;
    taken = 0;
    if (fast == Py_None)
        goto done;
    taken = -1;
    if (!(sa = PyObject_GetAttr(state, S_sa)))
        goto done;
    int go = usable_and_used(sa);
    if (go <= 0) {
        taken = go;
        goto done;
    }
    if (!as_double(state, S_limit_packets, &limit_packets) ||
        !as_double(state, S_limit_bytes, &limit_bytes) ||
        !as_double(sa, S_allocations, &allocations) || !as_double(sa, S_nbytes, &nbytes))
        goto done;
    count = run_length(items, n, at, limit_packets - allocations, &total);
    while (count && nbytes + (double)total >= limit_bytes) {  // the limit's packet: readable
        count--;
        total -= PyBytes_GET_SIZE(items[at + count]);
    }
    taken = 0;
    if (!count)
        goto done;
    taken = -1;
    if (!(lock = PyObject_GetAttr(state, S_lock)))
        goto done;
    PyObject *locked = PyObject_CallMethodNoArgs(lock, S_locked);
    int held = locked ? PyObject_IsTrue(locked) : -1;
    Py_XDECREF(locked);
    if (held) {  // another thread is taking numbers: the readable path waits for it
        taken = held < 0 ? -1 : 0;
        goto done;
    }
    if (!as_u64(state, S_seq, &seq) || !as_u64(state, S_seq_limit, &seq_limit))
        goto done;
    taken = 0;
    if (seq >= seq_limit || (uint64_t)count > seq_limit - seq)  // no room under the floor
        goto done;
    taken = -1;
    if (!(next = PyLong_FromUnsignedLongLong(seq + (uint64_t)count)) ||
        PyObject_SetAttr(state, S_seq, next) < 0 || !(salt = PyObject_GetAttr(state, S_iv_salt)))
        goto done;
    esps = seal(fast, items, at, count, seq + 1, salt);
    if (esps && !PyList_Check(esps))
        PyErr_SetString(PyExc_TypeError, "a run's ESP packets: a list");
    else if (esps && count_use(datapath, sa, count, total, S_EspOutPackets, S_EspOutBytes) &&
             append_outbounds(outs, fast, esps))
        taken = PyList_GET_SIZE(esps);
done:
    Py_DECREF(state);
    Py_XDECREF(fast);
    Py_XDECREF(sa);
    Py_XDECREF(lock);
    Py_XDECREF(salt);
    Py_XDECREF(esps);
    Py_XDECREF(next);
    return taken;
}

static PyObject *outputs(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 4 || !PyList_Check(args[3])) {
        PyErr_SetString(PyExc_TypeError, "outputs(datapath, packets, start, outs: a list)");
        return NULL;
    }
    Py_ssize_t at = PyLong_AsSsize_t(args[2]);
    PyObject *packets = at < 0 && PyErr_Occurred()
                            ? NULL
                            : PySequence_Fast(args[1], "packets: a sequence");
    if (!packets)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(packets), taken = 1;
    PyObject *const *items = PySequence_Fast_ITEMS(packets);
    while (at >= 0 && at < n && (taken = fast_run(args[0], items, n, at, args[3])) > 0)
        at += taken;
    Py_DECREF(packets);
    return taken < 0 ? NULL : PyLong_FromSsize_t(at);
}

/* -- inbound ----------------------------------------------------------------------------- */

/* What Datapath._fast_open_run keeps across one call. */
typedef struct {
    PyObject *datapath, *payloads, *state, *sa, *fast, *runs, *replay, *verdicts, *inners;
    PyObject *const *items;
    Py_ssize_t n;
    long tos;
    double packet_room, byte_room;
    long long taken, nbytes;
    PyObject *passed_packet;  // the last packet let through by its verdict, and its parts
    Parts parts;
    long passed;  // its next header (-1: none yet)
} Inbound;

/* The state of esp's SA (to dst) if the fast path may open it: a new reference, or NULL
 * (with an error set, or none). Sets in->sa too. */
static PyObject *inbound_state(Inbound *in, PyObject *esp, PyObject *dst) {
    if (!PyBytes_Check(esp))
        return NULL;
    const uint8_t *p = (const uint8_t *)PyBytes_AS_STRING(esp);
    Py_ssize_t size = PyBytes_GET_SIZE(esp) < 4 ? PyBytes_GET_SIZE(esp) : 4;
    unsigned long spi = 0;
    for (Py_ssize_t i = 0; i < size; i++)
        spi = spi << 8 | p[i];
    PyObject *key = Py_BuildValue("(OOk)", Esp, dst, spi);
    PyObject *sad = key ? PyObject_GetAttr(in->datapath, S__sad) : NULL;
    PyObject *by_key = sad ? PyObject_GetAttr(sad, S_by_key) : NULL;
    PyObject *states = by_key ? PyObject_GetAttr(in->datapath, S__states) : NULL;
    PyObject *sa = states ? PyDict_GetItemWithError(by_key, key) : NULL;
    PyObject *state = sa ? PyDict_GetItemWithError(states, key) : NULL, *found = NULL;
    Py_XINCREF(state);
    Py_XDECREF(key);
    Py_XDECREF(sad);
    Py_XDECREF(by_key);
    Py_XDECREF(states);
    if (!state)
        return NULL;
    PyObject *own = PyObject_GetAttr(state, S_sa);
    if (own && own == sa && usable_and_used(sa) == 1 && is_true(state, S_tunnel) == 1 &&
        !(in->tos & ECN_MASK) && generations_moved(in->datapath) == 0) {
        in->sa = Py_NewRef(sa);
        found = Py_NewRef(state);
    }
    Py_XDECREF(own);
    Py_DECREF(state);
    return found;
}

/* ReplayWindow.accept_next(count): the count numbers after the top received, the bitmap
 * (bit i: top - i) shifted past them and filled, within the window's size. */
static int accept_next(PyObject *replay, Py_ssize_t count) {
    PyObject *bitmap = PyObject_GetAttr(replay, S_bitmap), *mask = NULL, *size = NULL;
    PyObject *top = NULL, *by = PyLong_FromSsize_t(count), *kept = NULL, *ones = NULL;
    PyObject *filled = NULL, *moved = NULL, *next = NULL;
    long long width;
    int done = 0;
    if (!bitmap || !by || !(mask = PyObject_GetAttr(replay, S__mask)) ||
        !(size = PyObject_GetAttr(replay, S_size)) || !(top = PyObject_GetAttr(replay, S_top)) ||
        ((width = PyLong_AsLongLong(size)) == -1 && PyErr_Occurred()))
        goto done;
    kept = count < width ? PyNumber_Lshift(bitmap, by) : PyLong_FromLong(0);
    PyObject *shift = kept ? PyLong_FromLongLong(count < width ? count : width) : NULL;
    PyObject *one = shift ? PyLong_FromLong(1) : NULL;
    PyObject *power = one ? PyNumber_Lshift(one, shift) : NULL;
    ones = power ? PyNumber_Subtract(power, one) : NULL;
    Py_XDECREF(shift);
    Py_XDECREF(one);
    Py_XDECREF(power);
    filled = ones ? PyNumber_Or(kept, ones) : NULL;
    moved = filled ? PyNumber_And(filled, mask) : NULL;
    next = moved ? PyNumber_Add(top, by) : NULL;
    done = next && PyObject_SetAttr(replay, S_bitmap, moved) == 0 &&
           PyObject_SetAttr(replay, S_top, next) == 0;
done:
    Py_XDECREF(bitmap);
    Py_XDECREF(mask);
    Py_XDECREF(size);
    Py_XDECREF(top);
    Py_XDECREF(by);
    Py_XDECREF(kept);
    Py_XDECREF(ones);
    Py_XDECREF(filled);
    Py_XDECREF(moved);
    Py_XDECREF(next);
    return done;
}

/* fastpath.open_next from payloads[at]: (payloads, next headers, cause) as a new tuple. */
static PyObject *open_next(Inbound *in, Py_ssize_t at) {
    if (in->runs != Py_None) {
        PyObject *top = PyObject_GetAttr(in->replay, S_top), *one = PyLong_FromLong(1);
        PyObject *from = top && one ? PyNumber_Add(top, one) : NULL;
        PyObject *start = PyLong_FromSsize_t(at);
        PyObject *packets = PyFloat_FromDouble(in->packet_room - (double)in->taken);
        PyObject *octets = PyFloat_FromDouble(in->byte_room - (double)in->nbytes);
        PyObject *opened = NULL;
        if (from && start && packets && octets) {
            PyObject *args[] = {in->runs, in->payloads, start, from, packets, octets};
            opened = PyObject_VectorcallMethod(
                S_open_run, args, 6 | PY_VECTORCALL_ARGUMENTS_OFFSET, NULL);
        }
        Py_XDECREF(top);
        Py_XDECREF(one);
        Py_XDECREF(from);
        Py_XDECREF(start);
        Py_XDECREF(packets);
        Py_XDECREF(octets);
        if (!opened)
            return NULL;
        PyObject *chunk, *next_headers, *cause_number, *cause;
        if (!PyArg_ParseTuple(opened, "O!O!O", &PyList_Type, &chunk, &PyBytes_Type,
                              &next_headers, &cause_number) ||
            !(cause = PyObject_GetItem(Causes, cause_number))) {
            Py_DECREF(opened);
            return NULL;
        }
        Py_ssize_t count = PyList_GET_SIZE(chunk);
        int stopped = !count || accept_next(in->replay, count) ? PyObject_IsTrue(cause) : -1;
        PyObject *result = NULL;
        if (stopped >= 0 && (count || stopped))
            result = PyTuple_Pack(3, chunk, next_headers, cause);
        Py_DECREF(opened);
        Py_DECREF(cause);
        if (result || stopped < 0 || count || stopped)  // taken, stopped, or an error
            return result;
    }
    PyObject *open_esp = PyObject_GetAttr(Fastpath, S_open_esp);
    if (!open_esp)
        return NULL;
    PyObject *args[] = {in->fast, in->replay, in->items[at]};
    PyObject *one = PyObject_Vectorcall(open_esp, args, 3, NULL), *result = NULL;
    Py_DECREF(open_esp);
    if (!one)
        return NULL;
    if (PyUnicode_Check(one))
        result = Py_BuildValue("(()yO)", "", one);
    else if (PyTuple_Check(one) && PyTuple_GET_SIZE(one) == 2) {
        long next_header = PyLong_AsLong(PyTuple_GET_ITEM(one, 1));
        if (!(next_header == -1 && PyErr_Occurred())) {
            char header = (char)next_header;
            result = Py_BuildValue("((O)y#s)", PyTuple_GET_ITEM(one, 0), &header,
                                   (Py_ssize_t)1, "");
        }
    } else
        PyErr_SetString(PyExc_TypeError, "fastpath.open_esp: a cause or a pair");
    Py_DECREF(one);
    return result;
}

/* Whether the decapsulated packet's flow has the verdict "" for this SA (-1: error); its
 * parts kept if so, so that the packets after it of the same flow pass by comparison. */
static int allowed_by_cache(Inbound *in, PyObject *payload, long next_header) {
    Flow flow;
    if (!flow_of((const uint8_t *)PyBytes_AS_STRING(payload), PyBytes_GET_SIZE(payload), &flow) ||
        next_header != (flow.family == AF_INET ? IPPROTO_IPIP_ : IPPROTO_IPV6_))
        return 0;
    PyObject *key = flow_key(&flow);
    PyObject *id = key ? PyLong_FromVoidPtr(in->state) : NULL;
    PyObject *pair = id ? PyTuple_Pack(2, key, id) : NULL;
    PyObject *verdict = pair ? PyDict_GetItemWithError(in->verdicts, pair) : NULL;
    int allowed = verdict ? PyUnicode_Check(verdict) && PyUnicode_GET_LENGTH(verdict) == 0
                          : (PyErr_Occurred() ? -1 : 0);
    Py_XDECREF(key);
    Py_XDECREF(id);
    Py_XDECREF(pair);
    if (allowed == 1) {
        Py_XSETREF(in->passed_packet, Py_NewRef(payload));
        in->parts = parts_of((const uint8_t *)PyBytes_AS_STRING(payload));
        in->passed = next_header;
    }
    return allowed;
}

/* One opened packet: let through, counted as a dummy, or to Datapath._decapsulated. */
static int deliver(Inbound *in, PyObject *payload, long next_header) {
    in->taken++;
    in->nbytes += PyBytes_GET_SIZE(payload);
    if (next_header == in->passed && same_flow(payload, in->passed_packet, &in->parts))
        return PyList_Append(in->inners, payload) == 0;
    if (next_header == IPPROTO_NONE_) {  // RFC 4303 §2.6: a dummy packet, discarded
        PyObject *counters = PyObject_GetAttr(in->datapath, S__counters);
        int done = counters && add(counters, S_EspInDummy, 1);
        Py_XDECREF(counters);
        return done;
    }
    int allowed = allowed_by_cache(in, payload, next_header);
    if (allowed)
        return allowed > 0 && PyList_Append(in->inners, payload) == 0;
    PyObject *inner = PyObject_CallMethod(in->datapath, "_decapsulated", "OOll", in->state,
                                          payload, next_header, in->tos);
    int done = inner && (inner == Py_None || PyList_Append(in->inners, inner) == 0);
    Py_XDECREF(inner);
    return done;
}

/* Open a chunk (from open_next) and hand each packet on; whether it went well. */
static int take_chunk(Inbound *in, PyObject *chunk, PyObject *next_headers) {
    Py_ssize_t count = PyTuple_Check(chunk) ? PyTuple_GET_SIZE(chunk) : PyList_GET_SIZE(chunk);
    PyObject *const *payloads = PyTuple_Check(chunk) ? &PyTuple_GET_ITEM(chunk, 0)
                                                     : &PyList_GET_ITEM(chunk, 0);
    if (PyBytes_GET_SIZE(next_headers) != count) {
        PyErr_SetString(PyExc_ValueError, "a next header for each payload");
        return 0;
    }
    const uint8_t *headers = (const uint8_t *)PyBytes_AS_STRING(next_headers);
    for (Py_ssize_t i = 0; i < count; i++) {
        if (!PyBytes_Check(payloads[i])) {
            PyErr_SetString(PyExc_TypeError, "an opened payload: bytes");
            return 0;
        }
        if (!deliver(in, payloads[i], headers[i]))
            return 0;
    }
    return 1;
}

/* The loop of Datapath._fast_open_run; -1 on error, else taken plus the dropped one. */
static long long open_payloads(Inbound *in, Py_ssize_t start, PyObject *src) {
    PyObject *first = in->items[start], *cause = NULL;
    Py_ssize_t at = start;
    while (at < in->n && !cause) {
        PyObject *esp = in->items[at];
        if (!PyBytes_Check(esp) || PyBytes_GET_SIZE(esp) < 4 ||
            memcmp(PyBytes_AS_STRING(esp), PyBytes_AS_STRING(first), 4) ||
            (double)in->taken >= in->packet_room ||
            (double)(in->nbytes + PyBytes_GET_SIZE(esp)) >= in->byte_room)
            break;
        PyObject *chunk = open_next(in, at);
        if (!chunk)
            return -1;
        PyObject *payloads = PyTuple_GET_ITEM(chunk, 0), *headers = PyTuple_GET_ITEM(chunk, 1);
        at += PySequence_Size(payloads);
        int done = take_chunk(in, payloads, headers);
        if (done && PyObject_IsTrue(PyTuple_GET_ITEM(chunk, 2)))
            cause = Py_NewRef(PyTuple_GET_ITEM(chunk, 2));
        Py_DECREF(chunk);
        if (!done)
            return -1;
    }
    long long dropped = 0;
    if (cause && PyBytes_GET_SIZE(in->items[at]) >= ESP_HEADER) {  // shorter: the readable's
        PyObject *said = PyObject_CallMethod(in->datapath, "_esp_dropped", "OOO", cause,
                                             in->state, src);
        Py_XDECREF(said);
        dropped = said ? 1 : -1;
    }
    Py_XDECREF(cause);
    return dropped;
}

static PyObject *inputs(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    PyObject *src, *dst;
    Inbound in = {.datapath = args[0], .passed = -1};
    if (nargs != 5 || !PyList_Check(args[4])) {
        PyErr_SetString(PyExc_TypeError, "inputs(datapath, payloads, start, outer, inners)");
        return NULL;
    }
    in.inners = args[4];
    Py_ssize_t start = PyLong_AsSsize_t(args[2]);
    if (PyErr_Occurred() || !PyArg_ParseTuple(args[3], "OOl", &src, &dst, &in.tos) ||
        !(in.payloads = PySequence_Fast(args[1], "payloads: a sequence")))
        return NULL;
    in.n = PySequence_Fast_GET_SIZE(in.payloads);
    PyObject *result = NULL;
    long long dropped = 0;
    double limit_packets, limit_bytes, allocations, nbytes;
    if (start < 0 || start >= in.n) {
        PyErr_SetString(PyExc_IndexError, "start: outside payloads");
        goto done;
    }
    in.items = PySequence_Fast_ITEMS(in.payloads);
    in.state = inbound_state(&in, in.items[start], dst);
    if (!in.state) {
        result = PyErr_Occurred() ? NULL : PyLong_FromLong(0);
        goto done;
    }
    if (!(in.fast = PyObject_GetAttr(in.state, S_fast)))
        goto done;
    if (in.fast == Py_None) {
        result = PyLong_FromLong(0);
        goto done;
    }
    if (!(in.runs = PyObject_GetAttr(in.fast, S_runs)) ||
        !(in.replay = PyObject_GetAttr(in.state, S_replay)) ||
        !(in.verdicts = PyObject_GetAttr(in.datapath, S__in_verdicts)) ||
        !PyDict_Check(in.verdicts) || !as_double(in.state, S_limit_packets, &limit_packets) ||
        !as_double(in.state, S_limit_bytes, &limit_bytes) ||
        !as_double(in.sa, S_allocations, &allocations) || !as_double(in.sa, S_nbytes, &nbytes))
        goto done;
    in.packet_room = limit_packets - allocations - 1;  // below each limit
    in.byte_room = limit_bytes - nbytes;
    dropped = open_payloads(&in, start, src);
    if (dropped >= 0 && count_use(in.datapath, in.sa, in.taken, in.nbytes, S_EspInPackets,
                                  S_EspInBytes))
        result = PyLong_FromLongLong(in.taken + dropped);
done:
    if (!result && !PyErr_Occurred())
        PyErr_SetString(PyExc_TypeError, "_in_verdicts: a dict");
    Py_DECREF(in.payloads);
    Py_XDECREF(in.state);
    Py_XDECREF(in.sa);
    Py_XDECREF(in.fast);
    Py_XDECREF(in.runs);
    Py_XDECREF(in.replay);
    Py_XDECREF(in.verdicts);
    Py_XDECREF(in.passed_packet);
    return result;
}

/* -- the module -------------------------------------------------------------------------- */

static PyObject *bind_names(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 6 || !PyType_Check(args[0]) ||
        !PyType_IsSubtype((PyTypeObject *)args[0], &PyTuple_Type)) {
        PyErr_SetString(PyExc_TypeError,
                        "bind(outbound: a tuple type, usable, esp, fastpath, flow, causes)");
        return NULL;
    }
    PyObject **bound[] = {&Outbound, &Usable, &Esp, &Fastpath, &FlowOf, &Causes};
    for (int i = 0; i < 6; i++)
        Py_XSETREF(*bound[i], Py_NewRef(args[i]));
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"bind", (PyCFunction)(void (*)(void))bind_names, METH_FASTCALL,
     "bind(outbound, usable, esp, fastpath, flow, causes): what the runs refer to, once."},
    {"outputs", (PyCFunction)(void (*)(void))outputs, METH_FASTCALL,
     "outputs(datapath, packets, start, outs): Datapath._fast_outputs."},
    {"inputs", (PyCFunction)(void (*)(void))inputs, METH_FASTCALL,
     "inputs(datapath, payloads, start, outer, inners): Datapath._fast_open_run."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_esp_fastrun", "The data path's fast runs in C.", 0, methods,
    NULL, NULL, NULL, NULL,
};

#define INTERN(name) || !(S_##name = PyUnicode_InternFromString(#name))

PyMODINIT_FUNC PyInit__esp_fastrun(void) {
    if (!(Empty = PyBytes_FromStringAndSize(NULL, 0)) NAMES(INTERN))
        return NULL;
    return PyModule_Create(&module);
}
