/* notify.h - the sd_notify protocol, spoken directly over $NOTIFY_SOCKET
 * SPDX-License-Identifier: MIT
 */
#ifndef MEM_SERVER_NOTIFY_H
#define MEM_SERVER_NOTIFY_H

/* Send state ("READY=1", "STOPPING=1", ...) when NOTIFY_SOCKET is set; no-op otherwise.
 * Returns 1 when sent, 0 when not under a notify-aware supervisor, -1 on error. */
int mem_srv_notify(const char *state);

#endif
