/* test_delete_topic_trash.c — a deleted topic's consume-queue directory is
 * renamed to a trash name under the store's locks and removed afterwards
 * (store_cq_trash.c). Asserted: after a delete and kill -9 of the process
 * before the files were removed, the next start leaves no trash behind and
 * the topic is empty (another topic intact); a topic re-created right after
 * its deletion starts empty, in the live store and after a restart; without
 * the hold, the housekeeper removes the trash by itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store_test_util.h"

static store_engine *open_store(const char *root)
{
    store_config c;
    st_small_config(&c, root);
    return st_open(&c);
}

static void put_to(store_engine *e, const char *topic, int32_t q, int i, int64_t want_offset)
{
    st_msg m;
    st_make(&m, topic, q, "T", NULL, NULL, 90, i);
    store_put_result r;
    assert_int_equal(store_put(e, &m.m, &r), 0);
    assert_int_equal(r.status, STORE_PUT_OK);
    if (want_offset >= 0)
        assert_int_equal(r.queue_offset, want_offset);
}

/* Entries of consumequeue/ whose names start with '.' (the trash). */
static int trash_entries(const char *root)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/consumequeue", root);
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *de; (de = readdir(d)) != NULL;)
        n += de->d_name[0] == '.' && strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
    closedir(d);
    return n;
}

static int32_t msgs_from(store_engine *e, const char *topic, int32_t q)
{
    store_get_result g;
    assert_int_equal(store_get_messages(e, topic, q, 0, 32, NULL, NULL, NULL, &g), 0);
    free(g.data);
    return g.msg_count;
}

/* The messages are written before a stop and start, so recovery after the
 * kill starts past them (state file's written offset) and re-dispatches
 * none: a deleted topic's records that recovery must re-dispatch come back
 * after a crash, with or without the trash (as Java rebuilds its queues
 * from the log). */
static void child_deletes_then_waits(const char *root, int fd)
{
    store_engine *e = open_store(root);
    for (int i = 0; i < 20; i++)
        put_to(e, "Gone", i % 2, i, -1);
    for (int i = 0; i < 20; i++)
        put_to(e, "Kept", 0, i, -1);
    store_close(e);
    e = open_store(root);
    store_test_hold_trash(e, true);
    store_delete_topic(e, "Gone");
    char ok = 1;
    if (write(fd, &ok, 1) != 1)
        _exit(6);
    for (;;)
        pause();
}

static void test_kill9_between_rename_and_removal(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        child_deletes_then_waits(root, fds[1]);
    }
    close(fds[1]);
    char ok = 0;
    ssize_t got = read(fds[0], &ok, 1);
    kill(pid, SIGKILL);
    int st;
    waitpid(pid, &st, 0);
    close(fds[0]);
    assert_int_equal(got, 1);
    assert_int_equal(trash_entries(root), 1); /* the process died before removing it */
    store_engine *e = open_store(root);
    assert_int_equal(trash_entries(root), 0);
    assert_int_equal(store_max_offset(e, "Gone", 0), 0);
    assert_int_equal(store_max_offset(e, "Gone", 1), 0);
    assert_int_equal(msgs_from(e, "Gone", 0), 0);
    assert_int_equal(store_max_offset(e, "Kept", 0), 20);
    put_to(e, "Gone", 0, 100, 0); /* re-created: starts empty */
    assert_int_equal(msgs_from(e, "Gone", 0), 1);
    store_close(e);
    st_rmrf(root);
    free(root);
}

static void test_recreated_topic_starts_empty(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    store_engine *e = open_store(root);
    for (int i = 0; i < 10; i++)
        put_to(e, "Again", 0, i, i);
    store_test_hold_trash(e, true);
    store_delete_topic(e, "Again");
    assert_int_equal(store_max_offset(e, "Again", 0), 0);
    put_to(e, "Again", 0, 50, 0);
    assert_int_equal(msgs_from(e, "Again", 0), 1);
    assert_int_equal(trash_entries(root), 1);
    store_close(e);
    e = open_store(root);
    assert_int_equal(trash_entries(root), 0);
    assert_int_equal(store_max_offset(e, "Again", 0), 1);
    assert_int_equal(msgs_from(e, "Again", 0), 1);
    /* not held: the housekeeper removes the trash (polled, not timed) */
    store_delete_topic(e, "Again");
    assert_int_equal(store_max_offset(e, "Again", 0), 0);
    for (int i = 0; i < 3000 && trash_entries(root) > 0; i++)
        usleep(10000);
    assert_int_equal(trash_entries(root), 0);
    store_close(e);
    st_rmrf(root);
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kill9_between_rename_and_removal),
        cmocka_unit_test(test_recreated_topic_starts_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
