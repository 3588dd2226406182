/*
 * cluster — cluster file read and write (see cluster.h), with jansson.  Errors name the
 * file and the field, because a hand-edited cluster file for a real allocation is the
 * likeliest place for a typo.
 */
#include "core/model/cluster.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/base/xalloc.h"

void cluster_fini(struct cluster *c)
{
    free(c->key_path);
    free(c->workdir);
    free(c->log_path);
    free(c->rsh);
    free(c->nodes);
    free(c->run_id);
    for (uint32_t i = 0; i < c->n_node_args; i++)
        free(c->node_args[i]);
    free(c->node_args);
    free(c->collector.trace_path);
    memset(c, 0, sizeof *c);
}

int cluster_load(struct cluster *c, const char *path, char **cause)
{
    memset(c, 0, sizeof *c);
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    if (!root) {
        *cause = xasprintf("%s:%d: %s", path, err.line, err.text);
        return -EINVAL;
    }
    const char *key = json_string_value(json_object_get(root, "key"));
    const char *workdir = json_string_value(json_object_get(root, "workdir"));
    const char *log = json_string_value(json_object_get(root, "log"));
    json_t *nodes = json_object_get(root, "nodes");
    if (!key || !workdir || !json_is_array(nodes) || json_array_size(nodes) == 0) {
        *cause = xasprintf("%s: needs \"key\", \"workdir\" and a non-empty \"nodes\" array", path);
        json_decref(root);
        return -EINVAL;
    }
    c->key_path = xstrdup(key);
    c->workdir = xstrdup(workdir);
    c->log_path = log ? xstrdup(log) : NULL;
    c->count = (uint32_t)json_array_size(nodes);
    c->nodes = xcalloc(c->count, sizeof *c->nodes);
    for (uint32_t i = 0; i < c->count; i++) {
        json_t *n = json_array_get(nodes, i);
        json_t *id = json_object_get(n, "id");
        const char *host = json_string_value(json_object_get(n, "host"));
        json_t *port = json_object_get(n, "port");
        json_t *slots = json_object_get(n, "slots");
        json_t *speed = json_object_get(n, "speed");
        json_t *pid = json_object_get(n, "pid");
        json_t *rpid = json_object_get(n, "remote_pid");
        const char *name = json_string_value(json_object_get(n, "name"));
        const char *bad = NULL;
        if (!json_is_integer(id) || json_integer_value(id) != i)
            bad = "\"id\" must equal the node's position";
        else if (!host || strlen(host) >= sizeof c->nodes[i].host)
            bad = "\"host\" missing or too long";
        else if (!json_is_integer(port) || json_integer_value(port) <= 0 ||
                 json_integer_value(port) > 65535)
            bad = "\"port\" must be 1..65535";
        else if (!json_is_integer(slots) || json_integer_value(slots) <= 0 ||
                 json_integer_value(slots) > 100000)
            bad = "\"slots\" must be 1..100000";
        else if (!json_is_number(speed) || json_number_value(speed) <= 0 ||
                 json_number_value(speed) > 1)
            bad = "\"speed\" must be in (0, 1]";
        else if (name && strlen(name) >= sizeof c->nodes[i].name)
            bad = "\"name\" too long";
        if (bad) {
            *cause = xasprintf("%s: node %u: %s", path, i, bad);
            json_decref(root);
            cluster_fini(c);
            return -EINVAL;
        }
        c->nodes[i].id = i;
        snprintf(c->nodes[i].host, sizeof c->nodes[i].host, "%s", host);
        c->nodes[i].port = (int)json_integer_value(port);
        c->nodes[i].slots = (uint32_t)json_integer_value(slots);
        c->nodes[i].speed = json_number_value(speed);
        c->nodes[i].pid = json_is_integer(pid) ? (int)json_integer_value(pid) : 0;
        c->nodes[i].remote_pid = json_is_integer(rpid) ? (int)json_integer_value(rpid) : 0;
        snprintf(c->nodes[i].name, sizeof c->nodes[i].name, "%s", name ? name : "");
    }
    const char *rsh = json_string_value(json_object_get(root, "rsh"));
    c->rsh = rsh ? xstrdup(rsh) : NULL;
    json_t *run = json_object_get(root, "run");
    if (json_is_object(run)) {
        const char *id = json_string_value(json_object_get(run, "id"));
        json_t *start = json_object_get(run, "start_ns");
        json_t *args = json_object_get(run, "node_args");
        c->run_id = id ? xstrdup(id) : NULL;
        c->start_ns = json_is_integer(start) ? (int64_t)json_integer_value(start) : 0;
        if (json_is_array(args) && json_array_size(args)) {
            c->node_args = xcalloc(json_array_size(args), sizeof *c->node_args);
            for (size_t i = 0; i < json_array_size(args); i++) {
                const char *a = json_string_value(json_array_get(args, i));
                if (a)
                    c->node_args[c->n_node_args++] = xstrdup(a);
            }
        }
    }
    json_t *col = json_object_get(root, "collector");
    if (json_is_object(col)) {
        const char *host = json_string_value(json_object_get(col, "host"));
        json_t *port = json_object_get(col, "port");
        json_t *pid = json_object_get(col, "pid");
        const char *trace = json_string_value(json_object_get(col, "trace"));
        if (!host || strlen(host) >= sizeof c->collector.host || !json_is_integer(port) ||
            json_integer_value(port) <= 0 || json_integer_value(port) > 65535) {
            *cause = xasprintf("%s: collector: needs \"host\" and \"port\" (1..65535)", path);
            json_decref(root);
            cluster_fini(c);
            return -EINVAL;
        }
        snprintf(c->collector.host, sizeof c->collector.host, "%s", host);
        c->collector.port = (int)json_integer_value(port);
        c->collector.pid = json_is_integer(pid) ? (int)json_integer_value(pid) : 0;
        json_t *rpid = json_object_get(col, "remote_pid");
        const char *name = json_string_value(json_object_get(col, "name"));
        c->collector.remote_pid = json_is_integer(rpid) ? (int)json_integer_value(rpid) : 0;
        snprintf(c->collector.name, sizeof c->collector.name, "%.*s",
                 (int)sizeof c->collector.name - 1, name ? name : "");
        c->collector.trace_path = trace ? xstrdup(trace) : NULL;
    }
    json_decref(root);
    return 0;
}

int cluster_save(const struct cluster *c, const char *path, char **cause)
{
    json_t *root = json_object();
    json_object_set_new(root, "version", json_integer(1));
    json_object_set_new(root, "key", json_string(c->key_path));
    json_object_set_new(root, "workdir", json_string(c->workdir));
    if (c->log_path)
        json_object_set_new(root, "log", json_string(c->log_path));
    json_t *nodes = json_array();
    for (uint32_t i = 0; i < c->count; i++) {
        const struct cluster_node *n = &c->nodes[i];
        json_t *o = json_pack("{s:i, s:s, s:i, s:i, s:f, s:i}", "id", (int)n->id, "host",
                              n->host, "port", n->port, "slots", (int)n->slots, "speed",
                              n->speed, "pid", n->pid);
        if (n->name[0])
            json_object_set_new(o, "name", json_string(n->name));
        if (n->remote_pid)
            json_object_set_new(o, "remote_pid", json_integer(n->remote_pid));
        json_array_append_new(nodes, o);
    }
    if (c->rsh)
        json_object_set_new(root, "rsh", json_string(c->rsh));
    json_object_set_new(root, "nodes", nodes);
    if (c->run_id || c->start_ns) {
        json_t *args = json_array();
        for (uint32_t i = 0; i < c->n_node_args; i++)
            json_array_append_new(args, json_string(c->node_args[i]));
        json_object_set_new(root, "run", json_pack("{s:s?, s:I, s:o}", "id", c->run_id,
                                                   "start_ns", (json_int_t)c->start_ns,
                                                   "node_args", args));
    }
    if (c->collector.host[0]) {
        json_t *col = json_pack("{s:s, s:i, s:i}", "host", c->collector.host, "port",
                                c->collector.port, "pid", c->collector.pid);
        if (c->collector.trace_path)
            json_object_set_new(col, "trace", json_string(c->collector.trace_path));
        if (c->collector.name[0])
            json_object_set_new(col, "name", json_string(c->collector.name));
        if (c->collector.remote_pid)
            json_object_set_new(col, "remote_pid", json_integer(c->collector.remote_pid));
        json_object_set_new(root, "collector", col);
    }
    char *tmp = xasprintf("%s.tmp.%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int rc = 0;
    if (fd < 0 || json_dumpfd(root, fd, JSON_INDENT(2)) < 0 || write(fd, "\n", 1) != 1) {
        rc = -errno;
        *cause = xasprintf("cannot write cluster file '%s': %s", tmp, strerror(errno));
    }
    if (fd >= 0)
        close(fd);
    if (rc == 0 && rename(tmp, path) < 0) {
        rc = -errno;
        *cause = xasprintf("cannot write cluster file '%s': %s", path, strerror(errno));
    }
    if (rc < 0)
        unlink(tmp);
    free(tmp);
    json_decref(root);
    return rc;
}

char *cluster_default_path(void)
{
    const char *env = getenv("JACKDAW_CLUSTER");
    if (env && *env)
        return xstrdup(env);
    const char *rt = getenv("XDG_RUNTIME_DIR");
    if (rt && *rt)
        return xasprintf("%s/jackdaw/cluster.json", rt);
    return xasprintf("/tmp/jackdaw-%d/cluster.json", (int)getuid());
}

char *cluster_owned_path(const char *cluster_path, enum cluster_owned what)
{
    const char *slash = strrchr(cluster_path, '/');
    const char *base = slash ? slash + 1 : cluster_path;
    int dir_len = slash ? (int)(slash - cluster_path) + 1 : 0; /* with its '/' */
    size_t stem = strlen(base);
    if (stem > 5 && strcmp(base + stem - 5, ".json") == 0)
        stem -= 5;
    static const char *const suffix[] = {".key", ".work", ".jobs"};
    static const char *const legacy[] = {"cluster.key", "work", "jobs"};
    if (stem == 7 && strncmp(base, "cluster", 7) == 0)
        return xasprintf("%.*s%s", dir_len, cluster_path, legacy[what]);
    return xasprintf("%.*s%.*s%s", dir_len, cluster_path, (int)stem, base, suffix[what]);
}
