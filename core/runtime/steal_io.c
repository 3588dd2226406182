/*
 * steal_io — stealing's shared steps on the wire, written against the node's API for its
 * parts (part.h) alone: a steal request sent, counted and traced (the thief's and the
 * CTWS holder's), a grant sent (the victim's and the LW leader's), and a grant's tasks
 * queued (the node's own grant handler, and the LW worker's).  Apart from node.c so that the daemon and the parts' fake node
 * (tests/unit/fake_node.c) run the very same code.
 */
#include <errno.h>

#include "core/kvs/kvs.h"
#include "core/net/proto.h"
#include "core/runtime/part.h"

void node_steal_request(struct node *n, uint32_t victim, uint32_t req, uint32_t max,
                        uint32_t asked)
{
    size_t at;
    struct wbuf *b = node_msg_begin(n, victim, MSG_STEAL_REQUEST, &at);
    wbuf_put_u32(b, req);
    wbuf_put_u32(b, max);
    node_msg_end(n, victim, at);
    node_counters(n)->steal_requests++;
    node_trace(n, TRACE_STEAL_REQUEST, TRACE_NO_TASK, (int32_t)victim, asked, 0);
}

int node_take_granted(struct node *n, uint32_t from, struct rbuf *r, enum node_queue_id q,
                      uint32_t *req, uint32_t *count, int64_t now)
{
    *req = rbuf_u32(r);
    *count = rbuf_u32(r);
    if (!rbuf_ok(r) || *count > PROTO_MAX_BATCH)
        return -EBADMSG;
    for (uint32_t i = 0; i < *count; i++) {
        struct ntask *t = ntask_decode(r);
        if (!t)
            return -EBADMSG;
        t->t_ready = now;
        node_trace(n, TRACE_TASK_STOLEN_IN, t->spec.key, (int32_t)from, 0, now);
        node_queue(n, q == NODE_SREADY && t->spec.input_bytes ? NODE_LREADY : q, t,
                   t->spec.input_bytes);
    }
    node_counters(n)->tasks_stolen += *count;
    return 0;
}

void node_send_grant(struct node *n, uint32_t to, uint16_t type, uint32_t req, void **tasks,
                     size_t count)
{
    size_t at;
    struct wbuf *b = node_msg_begin(n, to, type, &at);
    wbuf_put_u32(b, req);
    wbuf_put_u32(b, (uint32_t)count);
    for (size_t i = 0; i < count; i++)
        proto_put_task(b, &((struct ntask *)tasks[i])->spec);
    node_msg_end(n, to, at);
    int64_t wall = count && node_tracing(n) ? node_wall_ns(n) : 0;
    for (size_t i = 0; i < count; i++) {
        struct ntask *t = tasks[i];
        node_trace(n, TRACE_TASK_STOLEN_OUT, t->spec.key, (int32_t)to, 0, wall);
        /* The shard must send this task's notices (a cancellation) to where it is now. */
        kvs_append(node_kvs(n), t->spec.key, KVS_FIELD_HISTORY, to, 0, 0);
        node_moved(n, t->spec.key, to);
        ntask_free(t);
    }
    node_counters(n)->tasks_given += count;
}
