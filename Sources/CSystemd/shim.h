#ifndef BLOCKD_CSYSTEMD_SHIM_H
#define BLOCKD_CSYSTEMD_SHIM_H
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <systemd/sd-bus.h>
#include <sys/uio.h>
#endif
