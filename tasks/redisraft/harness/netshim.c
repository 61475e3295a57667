#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
/* Redirects this process's TCP connections to 127.0.0.1:<port> listed in SYSMO_CONNECT_MAP
 * ("port=proxyport,...") to the harness's proxy, so every Raft message passes the harness. */
int connect(int fd, const struct sockaddr *addr, socklen_t len) {
    static int (*real)(int, const struct sockaddr *, socklen_t);
    if (!real) real = dlsym(RTLD_NEXT, "connect");
    const char *map = getenv("SYSMO_CONNECT_MAP");
    if (map && addr && addr->sa_family == AF_INET && len >= sizeof(struct sockaddr_in)) {
        struct sockaddr_in in;
        memcpy(&in, addr, sizeof in);
        unsigned port = ntohs(in.sin_port);
        for (const char *p = map; *p;) {
            char *end;
            unsigned long from = strtoul(p, &end, 10);
            if (*end != '=') break;
            unsigned long to = strtoul(end + 1, &end, 10);
            if (from == port) {
                in.sin_port = htons((unsigned short)to);
                return real(fd, (const struct sockaddr *)&in, sizeof in);
            }
            if (*end != ',') break;
            p = end + 1;
        }
    }
    return real(fd, addr, len);
}
