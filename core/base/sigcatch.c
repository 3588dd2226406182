/*
 * sigcatch — see sigcatch.h.
 */
#include "core/base/sigcatch.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t pending;

static void on_signal(int sig)
{
    pending = sig;
}

void sigcatch_install(bool restart)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = restart ? SA_RESTART : 0;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

int sigcatch_pending(void)
{
    return pending;
}

int sigcatch_take(void)
{
    int sig = pending;
    pending = 0;
    return sig;
}

void sigcatch_note(int sig)
{
    pending = sig;
}
