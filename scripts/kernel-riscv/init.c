// SPDX-License-Identifier: GPL-2.0-only
/*
 * /init of the riscv64 mm test's initramfs (scripts/kernel-riscv-test.sh).
 * Debian bookworm has no riscv64 busybox (riscv64 is not one of its release
 * architectures), so this static program does what the arm64 test's
 * busybox script (scripts/kernel-tlb/init.sh) does: runs the TLB stress
 * program and, when asked, the kernel's mm selftests, prints "sdmm:" lines
 * on the console and powers off. Parameters come from the kernel command
 * line: sdmm.stress=SECONDS sdmm.selftests=0|1, and sdmm.onepage=N,
 * sdmm.faultprobes=N, sdmm.rocheck=1 and sdmm.handshakes=N for
 * tlb_stress's -o N, -f N, -w and -x N.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define MAX_TESTS 16

static double uptime(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* Power off whatever happened: QEMU must exit (-no-reboot). */
static void __attribute__((noreturn)) off(void)
{
	printf("sdmm: done\n");
	fflush(stdout);
	/* Out of the UART before the kernel's power-off lines, not among them. */
	tcdrain(1);
	sync();
	reboot(RB_POWER_OFF);
	printf("sdmm: reboot(RB_POWER_OFF) failed: %s\n", strerror(errno));
	fflush(stdout);
	for (;;)
		pause();
}

/* The exit code as a shell reports it: 128 + signal when killed. */
static int status_rc(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 255;
}

static volatile pid_t alarm_pid;
static volatile int alarm_fired;

static void on_alarm(int sig)
{
	(void)sig;
	alarm_fired = 1;
	kill(-alarm_pid, SIGKILL);
	kill(alarm_pid, SIGKILL);
}

/*
 * Run argv with the console as its output; kill it (and its process
 * group) after `limit` seconds. Returns its exit code. init sleeps in
 * waitpid meanwhile: waking up to poll would switch a hart to init's
 * address space, which flushes that hart's TLB under QEMU and could hide
 * the stale entry a test is looking for.
 */
static int run_console(char *const argv[], int limit)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return 255;
	if (pid == 0) {
		setpgid(0, 0);
		execv(argv[0], argv);
		_exit(127);
	}
	alarm_pid = pid;
	alarm_fired = 0;
	sigaction(SIGALRM, &sa, NULL);
	alarm(limit);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return 255;
	alarm(0);
	if (alarm_fired) {
		printf("sdmm: %s timed out after %d s\n", argv[0], limit);
		return 124;
	}
	return status_rc(st);
}

/*
 * Run a selftest with its stdout and stderr prefixed "sdmm: NAME| ", line
 * by line, as init.sh's sed does; kill it after `limit` seconds.
 */
static int run_prefixed(const char *path, const char *name, int limit)
{
	double end = uptime() + limit;
	char buf[4096], line[1024];
	size_t ll = 0;
	int p[2], st, killed = 0;
	pid_t pid;

	if (pipe(p))
		return 255;
	pid = fork();
	if (pid < 0)
		return 255;
	if (pid == 0) {
		setpgid(0, 0);
		dup2(p[1], 1);
		dup2(p[1], 2);
		close(p[0]);
		close(p[1]);
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		struct pollfd pf = { .fd = p[0], .events = POLLIN };
		int left = (int)((end - uptime()) * 1000);
		ssize_t n;

		if (left <= 0 || poll(&pf, 1, left) == 0) {
			printf("sdmm: %s| (timed out after %d s)\n", name, limit);
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			killed = 1;
			break;
		}
		n = read(p[0], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\n' || ll == sizeof(line) - 1) {
				line[ll] = 0;
				printf("sdmm: %s| %s\n", name, line);
				ll = 0;
				if (buf[i] == '\n')
					continue;
			}
			line[ll++] = buf[i];
		}
	}
	if (ll) {
		line[ll] = 0;
		printf("sdmm: %s| %s\n", name, line);
	}
	fflush(stdout);
	close(p[0]);
	waitpid(pid, &st, 0);
	return killed ? 124 : status_rc(st);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
	char cmdline[4096] = "", isa[512] = "", arg_t[32], arg_o[32], arg_f[32], arg_x[32];
	int stress = 10, selftests = 0, onepage = 0, faultprobes = 1, rocheck = 0, handshakes = 0;
	FILE *f;

	/* The console is line-buffered for the lines the script parses. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (mount("proc", "/proc", "proc", 0, NULL) || mount("tmp", "/tmp", "tmpfs", 0, NULL)) {
		printf("sdmm: mount: %s\n", strerror(errno));
		off();
	}
	f = fopen("/proc/cmdline", "r");
	if (f) {
		if (!fgets(cmdline, sizeof(cmdline), f))
			cmdline[0] = 0;
		fclose(f);
	}
	for (char *a = strtok(cmdline, " \n"); a; a = strtok(NULL, " \n")) {
		if (!strncmp(a, "sdmm.stress=", 12))
			stress = atoi(a + 12);
		else if (!strncmp(a, "sdmm.selftests=", 15))
			selftests = atoi(a + 15);
		else if (!strncmp(a, "sdmm.onepage=", 13))
			onepage = atoi(a + 13);
		else if (!strncmp(a, "sdmm.faultprobes=", 17))
			faultprobes = atoi(a + 17);
		else if (!strcmp(a, "sdmm.rocheck=1"))
			rocheck = 1;
		else if (!strncmp(a, "sdmm.handshakes=", 16))
			handshakes = atoi(a + 16);
	}
	/* The first hart's ISA string: "svinval" is in it when QEMU has it. */
	f = fopen("/proc/cpuinfo", "r");
	if (f) {
		char l[512];

		while (!isa[0] && fgets(l, sizeof(l), f))
			if (!strncmp(l, "isa", 3) && strchr(l, ':'))
				snprintf(isa, sizeof(isa), "%s", strchr(l, ':') + 2);
		fclose(f);
		isa[strcspn(isa, "\n")] = 0;
	}
	printf("sdmm: start cpus=%ld stress=%ds selftests=%d onepage=%d faultprobes=%d rocheck=%d handshakes=%d\n",
	       sysconf(_SC_NPROCESSORS_ONLN), stress, selftests, onepage, faultprobes, rocheck,
	       handshakes);
	printf("sdmm: isa %s\n", isa[0] ? isa : "(none in /proc/cpuinfo)");

	snprintf(arg_t, sizeof(arg_t), "%d", stress);
	snprintf(arg_o, sizeof(arg_o), "%d", onepage);
	snprintf(arg_f, sizeof(arg_f), "%d", faultprobes);
	snprintf(arg_x, sizeof(arg_x), "%d", handshakes);
	char *const sargv[] = { "/tlb_stress", "-t", arg_t, "-o", arg_o, "-f", arg_f,
				"-x", arg_x, rocheck ? "-w" : NULL, NULL };
	/* tlb_stress ends a hang itself (alarm at stress + 60 s). */
	printf("sdmm: stress rc=%d\n", run_console(sargv, stress + 120));

	if (selftests == 1) {
		char *names[MAX_TESTS];
		int n = 0, pass = 0, fail = 0, skip = 0;
		struct dirent *d;
		DIR *dir;
		int fd;

		/*
		 * mremap_test maps 2 GB regions (it touches 4 MB of them): more
		 * than the default overcommit heuristic allows in a 512 MB VM.
		 */
		fd = open("/proc/sys/vm/overcommit_memory", O_WRONLY);
		if (fd < 0 || write(fd, "1\n", 2) != 2)
			printf("sdmm: cannot set vm.overcommit_memory: %s\n", strerror(errno));
		if (fd >= 0)
			close(fd);
		dir = opendir("/selftests");
		while (dir && (d = readdir(dir)) && n < MAX_TESTS)
			if (d->d_name[0] != '.')
				names[n++] = strdup(d->d_name);
		if (dir)
			closedir(dir);
		qsort(names, n, sizeof(*names), cmp_str);
		/* The kselftest convention: exit 0 pass, 4 skip, anything else fail. */
		for (int i = 0; i < n; i++) {
			char path[256];
			double t0 = uptime();
			int rc;
			const char *v;

			snprintf(path, sizeof(path), "/selftests/%s", names[i]);
			rc = run_prefixed(path, names[i], 300);
			if (rc == 0) {
				pass++;
				v = "pass";
			} else if (rc == 4) {
				skip++;
				v = "skip";
			} else {
				fail++;
				v = "fail";
			}
			printf("sdmm: selftest %s %s rc=%d seconds=%d\n", names[i], v, rc,
			       (int)(uptime() - t0));
		}
		printf("sdmm: selftests pass=%d fail=%d skip=%d\n", pass, fail, skip);
	}
	off();
}
