/*
 * bench_judged — system calls for bench/calls.sh to time under landlock-run
 * with and without the supervisor (src/util/supervise.c).
 *
 *   bench_judged judged N   N chmod() of a file in the current directory
 *                           and N connect() to 127.0.0.1:1 (refused): each
 *                           one a round trip to the supervisor
 *   bench_judged chmod N    the chmod() calls only
 *   bench_judged connect N  the connect() calls only
 *   bench_judged plain N    N getppid(): not judged, only the filter runs
 *
 * It prints nothing and exits 0 (bench_paired times the whole process).
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 1000;
	struct sockaddr_in sin;

	if (argc < 3)
		return 2;
	if (strcmp(argv[1], "plain") == 0) {
		for (long i = 0; i < n; i++)
			(void)getppid();
		return 0;
	}
	close(open("bench-judged.tmp", O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(1);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	for (long i = 0; i < n; i++) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (strcmp(argv[1], "connect") != 0)
			(void)chmod("bench-judged.tmp", 0644);
		if (strcmp(argv[1], "chmod") != 0)
			(void)connect(fd, (struct sockaddr *)&sin, sizeof(sin));
		close(fd);
	}
	unlink("bench-judged.tmp");
	return 0;
}
