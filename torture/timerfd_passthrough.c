/* Test-only LD_PRELOAD shim used under faketime (torture/clock.py). libfaketime 0.9.10 fakes
 * CLOCK_BOOTTIME/CLOCK_MONOTONIC to the fake wall date and shifts absolute timerfd deadlines
 * on those clocks, so a timerfd armed with TFD_TIMER_ABSTIME on CLOCK_BOOTTIME never fires
 * (checked with a 10-line C program: no daemon involved). With this shim loaded before
 * libfaketime and FAKETIME_DONT_FAKE_MONOTONIC=1, the boot and monotonic clocks are real,
 * only the wall clock is fake, and timerfd_settime goes straight to the kernel. */
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

int timerfd_settime(int fd, int flags, const struct itimerspec *new_value, struct itimerspec *old_value) {
    return (int)syscall(SYS_timerfd_settime, fd, flags, new_value, old_value);
}
