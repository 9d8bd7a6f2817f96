// Preloaded before libfaketime by Tests/Calendar/later: keeps deadlines on the monotonic and boot
// clocks real while libfaketime moves the wall clock.
//
// With FAKETIME_DONT_FAKE_MONOTONIC=1, libfaketime 0.9.10 (Debian 12) still moves every absolute
// deadline given to timerfd_settime and clock_nanosleep by the wall clock's offset, whatever the
// timer's clock: Dispatch's timers (every Task.sleep of a Swift process) then fail with EINVAL and
// never fire, and Python's time.sleep raises EINVAL. Here, a timer or sleep on any clock but the
// wall clock goes to the kernel as given; the wall clock's still go through libfaketime.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

// Descriptors of timers on the wall clock, which libfaketime must still see (one bit each).
#define TRACKED 4096
static atomic_uchar realtime_fds[TRACKED / 8];

static void mark(int fd, int on) {
    if (fd < 0 || fd >= TRACKED) return;
    unsigned char bit = (unsigned char)(1u << (fd % 8));
    if (on) atomic_fetch_or(&realtime_fds[fd / 8], bit);
    else atomic_fetch_and(&realtime_fds[fd / 8], (unsigned char)~bit);
}

static int marked(int fd) {
    return fd >= 0 && fd < TRACKED && (atomic_load(&realtime_fds[fd / 8]) & (1u << (fd % 8)));
}

int timerfd_create(int clock, int flags) {
    int fd = (int)syscall(SYS_timerfd_create, clock, flags);
    if (fd >= 0) mark(fd, clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_ALARM);
    return fd;
}

int timerfd_settime(int fd, int flags, const struct itimerspec *value, struct itimerspec *old) {
    if (marked(fd)) {
        int (*next)(int, int, const struct itimerspec *, struct itimerspec *) = dlsym(RTLD_NEXT, "timerfd_settime");
        if (next) return next(fd, flags, value, old);
    }
    return (int)syscall(SYS_timerfd_settime, fd, flags, value, old);
}

int clock_nanosleep(clockid_t clock, int flags, const struct timespec *request, struct timespec *remain) {
    if (clock == CLOCK_REALTIME) {
        int (*next)(clockid_t, int, const struct timespec *, struct timespec *) = dlsym(RTLD_NEXT, "clock_nanosleep");
        if (next) return next(clock, flags, request, remain);
    }
    // clock_nanosleep returns the error instead of setting errno.
    return syscall(SYS_clock_nanosleep, clock, flags, request, remain) == 0 ? 0 : errno;
}
