/* `wzplan archive merge OUT IN...`: archives from the shards of a sweep (or
 * any archives) combined into one in one transaction. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "archive/merge.h"
#include "cli/cli.h"
#include "cli/commands.h"

static void help(void)
{
	printf("Usage: wzplan archive merge OUT IN... [--skip-duplicates]\n"
	       "\n"
	       "Copies every run of the archives IN into the archive OUT (created when\n"
	       "absent), in one transaction: each run keeps its command, arguments, program\n"
	       "version, times, inputs, figures, series and fleets, and gets a new run id\n"
	       "in OUT.  A run of a sweep point (wzplan-sweep(5)) whose point id is already\n"
	       "in OUT, or in an earlier IN, is a duplicate: the merge is refused, or with\n"
	       "--skip-duplicates the first is kept and the others left out when their\n"
	       "figures are the same (and the merge refused when they differ).  Inputs are\n"
	       "only read; archives of another application or of another schema version\n"
	       "are refused.  On any error OUT is left as it was, or not created.\n"
	       "\n"
	       "Options:\n"
	       "  --skip-duplicates      keep the first run of each point (see above)\n"
	       "  -q, --quiet            no summary on standard error\n"
	       "  -h, --help             this help\n"
	       "\n"
	       "Example:\n"
	       "  wzplan archive merge grid.sqlite shard-*.sqlite\n");
}

int wz_cmd_archive_merge(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "skip-duplicates", no_argument, NULL, 'D' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	wza_dup_policy policy = WZA_DUP_REFUSE;
	int quiet = 0, c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'D': policy = WZA_DUP_SKIP; break;
		case 'q': quiet = 1; break;
		case 'h': help(); return 0;
		case ':': return wz_cli_bad_option("archive merge", ':', argv);
		default: return wz_cli_bad_option("archive merge", '?', argv);
		}
	}
	if (argc - optind < 2)
		return wz_cli_usage("archive merge", "merge takes OUT and at least one IN");
	wz_diag diag;
	wz_diag_clear(&diag);
	wza_merge_stats st;
	if (wza_merge(argv[optind], argv + optind + 1, argc - optind - 1, policy, &st, &diag))
		return wz_cli_fail("archive merge", &diag);
	if (!quiet)
		fprintf(stderr, "wzplan archive merge: %ld run%s copied into %s, %ld duplicate%s left "
				"out\n",
			st.copied, st.copied == 1 ? "" : "s", argv[optind], st.duplicates,
			st.duplicates == 1 ? "" : "s");
	return 0;
}
