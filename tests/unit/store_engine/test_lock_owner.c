/* test_lock_owner.c — the store's `lock` file names its holder: "lock" first
 * (as Java writes it), then this process's pid and start time; a second open
 * in this process is refused and store_locked_by_this_process says the
 * holder is us (what a hot reload's new generation relies on); after close
 * nobody holds it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store_engine.h"
#include "store_test_util.h"

static void lock_names_this_process(void **state)
{
    (void)state;
    char *root = st_tmpdir();
    assert_non_null(root);
    assert_false(store_locked_by_this_process(root, "store")); /* no lock file yet */
    store_config c;
    st_small_config(&c, root);
    c.lock_owner = "store";
    store_engine *e = NULL, *e2 = NULL;
    char err[512] = "";
    assert_int_equal(store_open(&c, &e, err, sizeof err), 0);

    char path[4200], buf[128] = "";
    snprintf(path, sizeof path, "%s/lock", root);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    assert_true(n > 4);
    assert_memory_equal(buf, "lock", 4);
    char pid[32];
    snprintf(pid, sizeof pid, "pid=%ld ", (long)getpid());
    assert_non_null(strstr(buf, pid));

    assert_non_null(strstr(buf, "owner=store\n"));
    assert_true(store_locked_by_this_process(root, "store"));
    /* another instance (another name) on the same directory is not ours */
    assert_false(store_locked_by_this_process(root, "store2"));
    assert_int_equal(store_open(&c, &e2, err, sizeof err), -EBUSY);
    assert_null(e2);
    store_close(e);
    assert_false(store_locked_by_this_process(root, "store"));
    /* and the store opens again */
    assert_int_equal(store_open(&c, &e, err, sizeof err), 0);
    store_close(e);
    st_rmrf(root);
    free(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(lock_names_this_process)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
