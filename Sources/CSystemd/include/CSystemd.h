#ifndef BLOCKD_CSYSTEMD_H
#define BLOCKD_CSYSTEMD_H
/* libsystemd's API as blockd uses it: sd-daemon (sd_notify, socket activation), sd-journal
 * (structured entries) and sd-bus (the agent's notifications, resolved's cache). The functions
 * are defined in CSystemd.c, which loads libsystemd.so.0 only when one is first called, so that
 * a program that calls none (every blockc command) never loads it (P1, Package.swift). */
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <systemd/sd-bus.h>
#include <sys/uio.h>

/* Loads libsystemd.so.0 if it is not loaded yet: NULL once it is, else what the dynamic loader
 * said (dlerror). Every function above then fails as its man page says it fails, with -ELIBACC
 * (or NULL) for its error. */
const char *blockd_systemd_load_error(void);
#endif
