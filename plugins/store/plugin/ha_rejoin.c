/* ha_rejoin.c — a demoted master rejoining its new master (issue 18 §5):
 * its log may hold records the new master never received (written after
 * the new master stopped replicating). The HA protocol has no way to ask
 * where two logs part, so the demoted broker finds out itself: it reports
 * a file start both logs share (at or below what its slaves acknowledged
 * while it was master), compares the master's stream with its own bytes,
 * and at the first record that differs — or where the master's log ends —
 * sets the rest of its log aside into a file of raw commit-log records
 * (what Java's MessageDecoder.decodes reads) with a JSON manifest, cuts
 * its log (and queues) there and replicates from that point on. A pending
 * rejoin is kept in a marker file so a restart resumes it: the comparison
 * writes nothing, and the set-aside file is named after the demotion (not
 * the moment of writing), so a crash while settling rewrites the same file
 * on the rerun instead of adding a second copy.
 *
 * A master whose log ends below where we started comparing (it was a slave
 * that acknowledged less than another one did) is found out: an rmqhost
 * master answers with an empty frame at its end, a Java master only with
 * heartbeats at the offset we asked for — either way we compare again a
 * file lower, until the master has data there, and never cut our log above
 * the master's end (that would append its next records behind ours). A
 * Java master also closes the connection once a later report exceeds its
 * log end (HAConnection's "greater than local commitLog offset"): a
 * connection it closed after our keep-alive without sending any data says
 * the same. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "ha.h"
#include "stored_record.h"

#define MARKER "ha_rejoin"
#define SETASIDE_DIR "ha-setaside"

static void marker_path(store_plugin *sp, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", sp->set.root_dir, MARKER);
}

int ha_rejoin_mark(store_plugin *sp, const char *master, int64_t acked)
{
    store_engine *e = sp->engine;
    int64_t end = store_ha_max_offset(e), fs = sp->set.engine.commitlog_file_size;
    int64_t from = acked > 0 && acked < end ? acked : end;
    from -= from % fs;
    if (from < store_ha_min_offset(e))
        from = store_ha_min_offset(e);
    char path[1200], tmp[1210];
    marker_path(sp, path, sizeof path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return -errno;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    fprintf(f, "%lld %s %lld\n", (long long)from, master,
            (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000);
    int rc = fflush(f) == 0 && fsync(fileno(f)) == 0 ? 0 : -errno;
    fclose(f);
    if (rc == 0 && rename(tmp, path) != 0)
        rc = -errno;
    return rc;
}

static void marker_clear(store_plugin *sp)
{
    char path[1200];
    marker_path(sp, path, sizeof path);
    unlink(path);
}

void ha_rejoin_load(store_plugin *sp, ha_rejoin *rj)
{
    memset(rj, 0, sizeof *rj);
    char path[1200];
    marker_path(sp, path, sizeof path);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    long long from = -1, stamp = 0;
    char master[128] = "";
    if (fscanf(f, "%lld %127s %lld", &from, master, &stamp) >= 1 && from >= 0) {
        rj->active = true;
        rj->from = from;
        rj->stamp_ms = stamp; /* 0: a marker of an older version */
        snprintf(rj->master, sizeof rj->master, "%s", master);
    }
    fclose(f);
}

int64_t ha_rejoin_begin(store_plugin *sp, ha_rejoin *rj)
{
    store_engine *e = sp->engine;
    if (rj->from < store_ha_min_offset(e))
        rj->from = store_ha_min_offset(e);
    rj->end = store_ha_max_offset(e);
    if (rj->from > rj->end)
        rj->from = rj->end;
    if (rj->end == 0) {
        /* an empty log: nothing to compare, a fresh slave */
        marker_clear(sp);
        rj->active = false;
        return 0;
    }
    /* a first report of 0 means "a fresh slave" to every master (it starts
     * at its last file): from offset 0 we ask for 1 and compare from there
     * (byte 0 is the high byte of the first record's size, 0 in both logs) */
    int64_t report = rj->from == 0 ? 1 : rj->from;
    rj->pos = report;
    rj->rec = rj->from;
    rj->prev_size = 0;
    rj->compared = false;
    rj->empty_at = -1;
    sp->api->log(sp->ctx, RMQ_LOG_WARN,
                 "HA rejoin: comparing this log [%lld, %lld) with the master's before "
                 "replicating (this broker was a master)",
                 (long long)rj->from, (long long)rj->end);
    return report;
}

/* Move the record cursor over every record of ours that ends at or below
 * `upto` (blank file-end padding included). */
static void advance_records(store_engine *e, ha_rejoin *rj, int64_t upto)
{
    while (rj->rec < upto) {
        uint8_t h[8];
        if (store_ha_read(e, rj->rec, h, 8) != 8)
            return;
        uint32_t size = stored_be32(h), magic = stored_be32(h + 4);
        if (size < 8 || rj->rec + (int64_t)size > upto)
            return;
        if (magic == STORED_RECORD_MAGIC) {
            rj->prev_off = rj->rec;
            rj->prev_size = size;
        } else if (magic != STORED_RECORD_BLANK_MAGIC) {
            return;
        }
        rj->rec += size;
    }
}

/* Write [from, to) of our log, records only, to SETASIDE_DIR with its
 * manifest; the count written, or -1. */
static long write_set_aside(store_plugin *sp, const ha_rejoin *rj, int64_t from, int64_t to,
                            char *name, size_t name_cap)
{
    store_engine *e = sp->engine;
    char dir[1200], base[128], path[1400];
    snprintf(dir, sizeof dir, "%s/%s", sp->set.root_dir, SETASIDE_DIR);
    snprintf(name, name_cap, "%s", dir);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST)
        return -1;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    long long at_ms = (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
    /* named after the demotion: a rerun after a crash rewrites this set */
    snprintf(base, sizeof base, "%lld-%020lld", rj->stamp_ms > 0 ? (long long)rj->stamp_ms : at_ms,
             (long long)from);
    char tmp[1420];
    snprintf(path, sizeof path, "%s/%s.commitlog", dir, base);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    snprintf(name, name_cap, "%s", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    json_t *msgs = json_array();
    long count = 0;
    int64_t bytes = 0, pos = from;
    size_t cap = 1u << 20;
    uint8_t *buf = malloc(cap);
    bool ok = buf != NULL;
    while (ok && pos < to) {
        uint8_t h[8];
        if (store_ha_read(e, pos, h, 8) != 8)
            break;
        uint32_t size = stored_be32(h), magic = stored_be32(h + 4);
        if (size < 8 || pos + (int64_t)size > to)
            break;
        if (magic == STORED_RECORD_BLANK_MAGIC) {
            pos += size;
            continue;
        }
        if (magic != STORED_RECORD_MAGIC)
            break;
        if (size > cap) {
            uint8_t *nb = realloc(buf, size);
            if (!nb) {
                ok = false;
                break;
            }
            buf = nb;
            cap = size;
        }
        if (store_ha_read(e, pos, buf, size) != (int64_t)size ||
            write(fd, buf, size) != (ssize_t)size) {
            ok = false;
            break;
        }
        stored_record r;
        if (stored_record_decode(buf, size, false, &r) == STORED_RECORD_OK)
            json_array_append_new(msgs, json_pack("{s:I, s:I, s:s#, s:i, s:I, s:I}", "offset",
                                                  (json_int_t)pos, "size", (json_int_t)size,
                                                  "topic", (const char *)r.topic, (int)r.topic_len,
                                                  "queueId", (int)r.queue_id, "queueOffset",
                                                  (json_int_t)r.queue_offset, "storeTimestamp",
                                                  (json_int_t)r.store_ts));
        count++;
        bytes += size;
        pos += size;
    }
    free(buf);
    ok = ok && fsync(fd) == 0;
    close(fd);
    ok = ok && rename(tmp, path) == 0;
    char stamp[32];
    time_t secs = now.tv_sec;
    struct tm tm;
    gmtime_r(&secs, &tm);
    strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_t *man =
        json_pack("{s:s+, s:I, s:I, s:I, s:I, s:I, s:s, s:s, s:o}", "file", base, ".commitlog",
                  "fromOffset", (json_int_t)from, "toOffset", (json_int_t)to, "count",
                  (json_int_t)count, "bytes", (json_int_t)bytes, "setAsideAtMs", (json_int_t)at_ms,
                  "setAsideAt", stamp, "newMaster", rj->master, "messages", msgs);
    /* the manifest last, through a rename: a listed set is complete */
    snprintf(path, sizeof path, "%s/%s.json", dir, base);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (!ok || !man || json_dump_file(man, tmp, JSON_INDENT(1)) != 0 || rename(tmp, path) != 0)
        ok = false;
    json_decref(man);
    if (ok) {
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            fsync(dfd);
            close(dfd);
        }
    }
    return ok ? count : -1;
}

/* Our log parts from the master's at `cut`: set [cut, end) aside, cut the
 * log there, forget the rejoin. */
static ha_rejoin_rc settle(store_plugin *sp, ha_rejoin *rj, int64_t cut, char *why, size_t why_cap)
{
    if (cut < rj->end) {
        char name[1400] = "";
        long n = write_set_aside(sp, rj, cut, rj->end, name, sizeof name);
        if (n < 0) {
            snprintf(why, why_cap,
                     "rejoin: cannot write the divergent tail [%lld, %lld) to %s: %s; log left "
                     "as it was",
                     (long long)cut, (long long)rj->end, name, strerror(errno));
            return HA_REJOIN_FAILED;
        }
        snprintf(rj->set_aside, sizeof rj->set_aside, "%s", name);
        int rc = store_ha_truncate(sp->engine, cut, rj->prev_off, rj->prev_size);
        if (rc != 0) {
            snprintf(why, why_cap, "rejoin: cutting the log at %lld failed: %s", (long long)cut,
                     strerror(-rc));
            return HA_REJOIN_FAILED;
        }
        sp->api->log(sp->ctx, RMQ_LOG_WARN,
                     "HA rejoin: %ld messages (log bytes [%lld, %lld)) the new master %s never "
                     "received are SET ASIDE in %s (manifest: .json beside it); this log is cut "
                     "at %lld and now replicates from the master",
                     n, (long long)cut, (long long)rj->end, rj->master, name, (long long)cut);
    } else {
        sp->api->log(sp->ctx, RMQ_LOG_INFO,
                     "HA rejoin: the master holds all of this log (to %lld): replicating",
                     (long long)rj->end);
    }
    marker_clear(sp);
    rj->active = false;
    return HA_REJOIN_RECONNECT;
}

/* The master sent nothing at all at rj->from (a Java master's heartbeats at
 * the offset we asked for): its log ends at or below it, or it lacks that
 * file. Cutting our log there would let the master's next records follow
 * ours from a point it never shared with us, so compare a file lower;
 * below our first byte everything of ours is divergent. */
static ha_rejoin_rc nothing_at_from(store_plugin *sp, ha_rejoin *rj, char *why, size_t why_cap)
{
    store_engine *e = sp->engine;
    int64_t fs = sp->set.engine.commitlog_file_size, min = store_ha_min_offset(e);
    if (rj->floor_hi > 0) {
        /* the first record at floor_hi differed and the master has nothing
         * below it: no point of its log is known to be ours */
        snprintf(why, why_cap,
                 "rejoin: the master's record at %lld differs from this log's and the master "
                 "holds nothing below it: the two logs share no known point; this log is left "
                 "as it was (wipe this store to replicate, or make it a master again)",
                 (long long)rj->floor_hi);
        return HA_REJOIN_FAILED;
    }
    if (rj->from > min) {
        int64_t was = rj->from;
        rj->from -= fs;
        if (rj->from < min)
            rj->from = min;
        sp->api->log(sp->ctx, RMQ_LOG_WARN,
                     "HA rejoin: the master %s has no data at %lld (its log ends below: it "
                     "acknowledged less than this broker's slaves did): comparing from %lld",
                     rj->master, (long long)was, (long long)rj->from);
        return HA_REJOIN_RECONNECT;
    }
    sp->api->log(sp->ctx, RMQ_LOG_WARN,
                 "HA rejoin: the master %s has no data at this log's first byte %lld: ALL of "
                 "this log [%lld, %lld) is set aside",
                 rj->master, (long long)rj->from, (long long)rj->from, (long long)rj->end);
    rj->rec = rj->from;
    rj->prev_size = 0;
    return settle(sp, rj, rj->from, why, why_cap);
}

ha_rejoin_rc ha_rejoin_master_closed(store_plugin *sp, ha_rejoin *rj, char *why, size_t why_cap)
{
    if (!rj->active || rj->compared)
        return HA_REJOIN_RECONNECT;
    return nothing_at_from(sp, rj, why, why_cap);
}

ha_rejoin_rc ha_rejoin_frame(store_plugin *sp, ha_rejoin *rj, int64_t phys, const uint8_t *body,
                             int32_t len, int32_t *used, char *why, size_t why_cap)
{
    store_engine *e = sp->engine;
    int64_t fs = sp->set.engine.commitlog_file_size;
    *used = 0;
    if (phys < rj->pos && len == 0 && !rj->compared) {
        /* the master's log ends below where we asked (it tells its end):
         * start again from the file holding its end */
        rj->from = phys - phys % fs;
        rj->floor_hi = 0;
        return HA_REJOIN_RECONNECT;
    }
    if (phys != rj->pos) {
        snprintf(why, why_cap,
                 "rejoin: the master sent offset %lld while this broker compared up to %lld",
                 (long long)phys, (long long)rj->pos);
        return HA_REJOIN_FAILED;
    }
    if (len == 0) {
        /* a Java master sends a heartbeat first, data or not: only a second
         * empty frame at the same offset says it has nothing past it */
        if (rj->empty_at != rj->pos) {
            rj->empty_at = rj->pos;
            return HA_REJOIN_MORE;
        }
        if (rj->pos >= rj->end)
            return settle(sp, rj, rj->end, why, why_cap);
        /* the master has nothing past pos now: our log goes further */
        if (!rj->compared)
            return nothing_at_from(sp, rj, why, why_cap);
        advance_records(e, rj, rj->pos);
        return settle(sp, rj, rj->rec, why, why_cap);
    }
    rj->empty_at = -1;
    int64_t n = rj->end - rj->pos < len ? rj->end - rj->pos : len;
    uint8_t mine[8192];
    int64_t done = 0;
    while (done < n) {
        int64_t want = n - done < (int64_t)sizeof mine ? n - done : (int64_t)sizeof mine;
        int64_t got = store_ha_read(e, rj->pos + done, mine, want);
        if (got <= 0) {
            snprintf(why, why_cap, "rejoin: cannot read this log at %lld",
                     (long long)(rj->pos + done));
            return HA_REJOIN_FAILED;
        }
        if (memcmp(mine, body + done, (size_t)got) != 0) {
            int64_t k = 0;
            while (mine[k] == body[done + k])
                k++;
            int64_t differ = rj->pos + done + k;
            advance_records(e, rj, differ);
            if (rj->rec == rj->from && rj->from > store_ha_min_offset(e)) {
                /* the very first record differs: the logs may part earlier */
                rj->floor_hi = rj->from;
                rj->from -= fs;
                if (rj->from < store_ha_min_offset(e))
                    rj->from = store_ha_min_offset(e);
                sp->api->log(sp->ctx, RMQ_LOG_WARN,
                             "HA rejoin: the logs differ at %lld already: comparing from %lld",
                             (long long)rj->floor_hi, (long long)rj->from);
                return HA_REJOIN_RECONNECT;
            }
            return settle(sp, rj, rj->rec, why, why_cap);
        }
        done += got;
    }
    rj->compared = true;
    rj->pos += n;
    advance_records(e, rj, rj->pos);
    if (rj->pos < rj->end)
        return HA_REJOIN_MORE;
    /* all of our log is the master's: append the rest of this frame */
    sp->api->log(sp->ctx, RMQ_LOG_INFO,
                 "HA rejoin: the master holds all of this log (to %lld): replicating",
                 (long long)rj->end);
    marker_clear(sp);
    rj->active = false;
    *used = (int32_t)n;
    return HA_REJOIN_APPEND;
}

/* The admin command `ha-setaside`: what rejoins set aside. */
static int admin_setaside(rmq_admin_call *call, int argc, const char *const *argv, void *ud)
{
    store_plugin *sp = ud;
    const rmq_host_api *a = sp->api;
    bool json = a->admin_wants_json(call);
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/%s", sp->set.root_dir, SETASIDE_DIR);
    if (argc >= 2 && strcmp(argv[1], "resend") == 0) {
        if (argc < 3 || argc > 4) {
            a->admin_write(call, "usage: ha-setaside resend FILE.commitlog [BROKER_HOST:PORT]\n");
            return 2;
        }
        return ha_resend(sp, call, dir, argv[2], argc == 4 ? argv[3] : NULL);
    }
    if (argc >= 2) {
        a->admin_write(call, "usage: ha-setaside [resend FILE.commitlog [BROKER_HOST:PORT]]\n");
        return 2;
    }
    DIR *d = opendir(dir);
    int n = 0;
    if (json)
        a->admin_write(call, "{\"dir\":\"%s\",\"sets\":[", dir);
    struct dirent *de;
    while (d && (de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l < 6 || strcmp(de->d_name + l - 5, ".json") != 0)
            continue;
        char path[1500];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        json_t *m = json_load_file(path, 0, NULL);
        if (!m)
            continue;
        if (json) {
            json_t *brief = json_deep_copy(m);
            json_object_del(brief, "messages");
            char *txt = json_dumps(brief, JSON_COMPACT);
            a->admin_write(call, "%s%s", n ? "," : "", txt ? txt : "{}");
            free(txt);
            json_decref(brief);
        } else {
            a->admin_write(call,
                           "%s/%s: %lld messages, log [%lld, %lld), set aside %s, new "
                           "master %s\n",
                           dir, json_string_value(json_object_get(m, "file")),
                           (long long)json_integer_value(json_object_get(m, "count")),
                           (long long)json_integer_value(json_object_get(m, "fromOffset")),
                           (long long)json_integer_value(json_object_get(m, "toOffset")),
                           json_string_value(json_object_get(m, "setAsideAt")),
                           json_string_value(json_object_get(m, "newMaster")));
        }
        json_decref(m);
        n++;
    }
    if (d)
        closedir(d);
    if (json)
        a->admin_write(call, "]}\n");
    else if (n == 0)
        a->admin_write(call, "nothing set aside (%s)\n", dir);
    return 0;
}

int ha_rejoin_init(store_plugin *sp)
{
    return sp->api->register_admin_command(
        sp->ctx, "ha-setaside",
        "[resend FILE [BROKER_ADDR]]: list the messages a demoted master set aside (never "
        "received by its new master), or send those of FILE to the master",
        admin_setaside, sp);
}
