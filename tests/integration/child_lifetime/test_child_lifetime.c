/* test_child_lifetime.c — a daemon a test starts dies when the test process
 * is killed with SIGKILL (no cleanup code can run then): started by the C
 * kit (rmq_td_start) and started by a shell script through rmq_tied. A
 * control case starts it from a shell without rmq_tied and sees it survive,
 * so the check can tell the two apart. This process is a child subreaper:
 * the orphaned daemon becomes its child, which it reaps and examines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rmq_test_support.h"

typedef enum { BY_C_KIT, BY_SHELL_TIED, BY_SHELL_UNTIED } starter;

static int setup(void **state)
{
    rmq_test_daemon *d = calloc(1, sizeof *d);
    *state = d;
    const char *servers[] = {"namesrv", NULL};
    if (!d || prctl(PR_SET_CHILD_SUBREAPER, 1) != 0 || rmq_td_init(d, servers, NULL) != 0 ||
        rmq_td_add_plugin(d, "namesrv", "namesrv", "namesrv", NULL) != 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    rmq_test_daemon *d = *state;
    if (d) {
        rmq_td_cleanup(d);
        free(d);
    }
    return 0;
}

/* The "test process": starts the daemon its way, writes the daemon's pid on
 * fd once it listens, then waits to be killed. */
static void test_process(rmq_test_daemon *d, starter how, int fd)
{
    pid_t daemon_pid = -1;
    if (how == BY_C_KIT) {
        if (rmq_td_start(d, NULL) != 0)
            _exit(3);
        daemon_pid = d->pid;
    } else {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "%s %s -c %s >/dev/null 2>&1 & echo $! >&%d; wait",
                 how == BY_SHELL_TIED ? RMQ_TIED_EXE : "", RMQ_TEST_DAEMON, d->conf_dir, fd);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    if (write(fd, &daemon_pid, sizeof daemon_pid) != sizeof daemon_pid)
        _exit(4);
    for (;;)
        pause();
}

/* Kill the test process started `how`; true when its daemon died of SIGKILL
 * within 10 s. The daemon is always stopped and reaped before returning. */
static bool daemon_dies_with_test(rmq_test_daemon *d, starter how)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t test_pid = fork();
    assert_true(test_pid >= 0);
    if (test_pid == 0) {
        close(fds[0]);
        test_process(d, how, fds[1]);
    }
    close(fds[1]);
    pid_t daemon_pid = -1;
    if (how == BY_C_KIT) {
        assert_int_equal(read(fds[0], &daemon_pid, sizeof daemon_pid), sizeof daemon_pid);
    } else {
        char line[32] = "";
        ssize_t n = read(fds[0], line, sizeof line - 1);
        assert_true(n > 0);
        daemon_pid = (pid_t)atoi(line);
    }
    close(fds[0]);
    assert_true(daemon_pid > 0);
    /* the daemon is up (its addresses written) before its test dies */
    char addrs[512];
    snprintf(addrs, sizeof addrs, "%s/listen.addrs", d->state_dir);
    for (int i = 0; i < 1000 && access(addrs, R_OK) != 0; i++)
        rmq_test_pause_ms(10);
    assert_int_equal(access(addrs, R_OK), 0);

    assert_int_equal(kill(test_pid, SIGKILL), 0);
    int st = 0;
    assert_int_equal(waitpid(test_pid, &st, 0), test_pid);

    /* orphaned, the daemon is now this subreaper's child */
    bool died = false;
    for (int i = 0; i < 1000; i++) {
        pid_t r = waitpid(daemon_pid, &st, WNOHANG);
        if (r == daemon_pid) {
            died = WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
            if (!died)
                fprintf(stderr, "daemon %d ended with status 0x%x, not by SIGKILL\n",
                        (int)daemon_pid, st);
            unlink(addrs);
            return died;
        }
        rmq_test_pause_ms(10);
    }
    /* still alive after 10 s: stop it here */
    kill(daemon_pid, SIGTERM);
    waitpid(daemon_pid, &st, 0);
    unlink(addrs);
    return false;
}

static void test_c_kit_daemon_dies_with_killed_test(void **state)
{
    assert_true(daemon_dies_with_test(*state, BY_C_KIT));
}

static void test_rmq_tied_daemon_dies_with_killed_script(void **state)
{
    assert_true(daemon_dies_with_test(*state, BY_SHELL_TIED));
}

/* control: without rmq_tied the daemon outlives its script */
static void test_untied_daemon_outlives_killed_script(void **state)
{
    assert_false(daemon_dies_with_test(*state, BY_SHELL_UNTIED));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_c_kit_daemon_dies_with_killed_test, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rmq_tied_daemon_dies_with_killed_script, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_untied_daemon_outlives_killed_script, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
