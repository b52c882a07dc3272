// SPDX-License-Identifier: GPL-2.0
/*
 * nsinit: PID 1 of the netswap guest.
 *
 * The guest's init is a busybox shell script (/init.sh). A shell cannot lock
 * itself in memory, so when the swap device is lost while the script's pages
 * are swapped out, the script dies on its next swap-in (SIGBUS, or EFAULT
 * from a system call) and, were it PID 1, the kernel panics ("Attempted to
 * kill init"): the run ends in a crash instead of showing what losing swap
 * did to the workload.
 *
 * nsinit locks itself in memory (mlockall), runs the script as its child,
 * reaps every orphan, and when the script ends without powering the guest
 * off (it was killed), says so on the console in the rig's line format and
 * powers off. A static binary of a few hundred KB stays resident.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/reboot.h>
#include <sys/wait.h>
#include <unistd.h>

#define SCRIPT "/init.sh"

static void console(void)
{
	int fd = open("/dev/console", O_RDWR | O_NOCTTY);

	if (fd < 0)
		return;
	dup2(fd, 1);
	dup2(fd, 2);
	if (fd > 2)
		close(fd);
}

int main(void)
{
	int status, rc;
	pid_t pid, w;

	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		fprintf(stderr, "NETSWAP: info nsinit: mlockall: %s\n", strerror(errno));

	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "NETSWAP: error nsinit: fork: %s\n", strerror(errno));
		execl("/bin/sh", "sh", SCRIPT, (char *)NULL);
		return 1;
	}
	if (pid == 0) {
		execl("/bin/sh", "sh", SCRIPT, (char *)NULL);
		fprintf(stderr, "NETSWAP: error nsinit: exec /bin/sh %s: %s\n", SCRIPT, strerror(errno));
		_exit(127);
	}

	for (;;) {
		w = waitpid(-1, &status, 0);
		if (w == pid)
			break;
		if (w < 0 && errno == ECHILD)
			break;
	}

	/* the script powers off itself when it ends normally: it did not */
	console();
	if (w == pid && WIFSIGNALED(status)) {
		printf("NETSWAP: error init script killed by signal %d (%s)\n",
		       WTERMSIG(status), strsignal(WTERMSIG(status)));
		rc = 128 + WTERMSIG(status);
	} else if (w == pid && WIFEXITED(status)) {
		printf("NETSWAP: error init script exited (%d) without powering off\n",
		       WEXITSTATUS(status));
		rc = WEXITSTATUS(status) ? WEXITSTATUS(status) : 1;
	} else {
		printf("NETSWAP: error nsinit lost its child\n");
		rc = 1;
	}
	printf("NETSWAP: exit rc=%d\n", rc);
	fflush(stdout);
	sync();
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}
