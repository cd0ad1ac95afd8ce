/* wzplan's entry point: git-style dispatch to the subcommands. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/wz_cleanup.h"
#include "config.h"
#include "runs/say.h"

/* What runs/ has to say: results to standard output, flushed so that a
 * write error is seen; the rest to standard error. */
static int print_said(void *ud, wz_say_stream to, const char *text)
{
	(void)ud;
	if (to == WZ_SAY_OUT)
		return fputs(text, stdout) == EOF || fflush(stdout) != 0 ? -1 : 0;
	return fputs(text, stderr) == EOF ? -1 : 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: wzplan <command> [options]\n"
		"\n"
		"How many GPUs, and how much money per year, does a smaller attention-cache\n"
		"format save for MLA models at long context, and at what quality?\n"
		"\n"
		"Commands:\n");
	for (int i = 0; i < wz_ncommands; i++)
		fprintf(out, "  %-10s %s\n", wz_commands[i].name, wz_commands[i].summary);
	fprintf(out,
		"\n"
		"  wzplan help <command>     help for one command (also: <command> --help)\n"
		"  wzplan --version          program version\n"
		"\n"
		"Exit status: 0 success, 1 failure while working, 2 bad usage or input.\n"
		"See wzplan(1).\n");
}

static const wz_command *find_command(const char *name)
{
	for (int i = 0; i < wz_ncommands; i++)
		if (!strcmp(wz_commands[i].name, name))
			return &wz_commands[i];
	return NULL;
}

int main(int argc, char **argv)
{
	wz_say_to(print_said, NULL);
	wz_cleanup_install();
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *name = argv[1];
	if (!strcmp(name, "--version") || !strcmp(name, "version")) {
		printf("wzplan %s\n", PACKAGE_VERSION);
		return 0;
	}
	if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(name, "help")) {
		if (argc < 3) {
			usage(stdout);
			return 0;
		}
		const wz_command *cmd = find_command(argv[2]);
		if (!cmd) {
			fprintf(stderr, "wzplan: no command '%s'; see 'wzplan help'\n", argv[2]);
			return 2;
		}
		char *help_argv[] = { argv[2], "--help", NULL };
		return cmd->run(2, help_argv);
	}
	const wz_command *cmd = find_command(name);
	if (!cmd) {
		fprintf(stderr, "wzplan: no command '%s'; see 'wzplan help'\n", name);
		return 2;
	}
	return cmd->run(argc - 1, argv + 1);
}
