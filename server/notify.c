/* notify.c - sd_notify without libsystemd: one datagram to an AF_UNIX socket
 * SPDX-License-Identifier: MIT
 */
#include "server/notify.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

int mem_srv_notify(const char *state)
{
    const char *path = getenv("NOTIFY_SOCKET");
    if (!path || !*path) return 0;
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    size_t len = strlen(path);
    if (len >= sizeof(sa.sun_path) || (path[0] != '/' && path[0] != '@')) return -1;
    memcpy(sa.sun_path, path, len);
    if (path[0] == '@') /* abstract namespace */
        sa.sun_path[0] = '\0';
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    socklen_t sl = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len);
    ssize_t n = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, sl);
    close(fd);
    return n == (ssize_t)strlen(state) ? 1 : -1;
}
