TESTS += tests/cli/cost.sh tests/cli/model.sh tests/cli/propose.sh tests/cli/man_examples.sh tests/cli/security.sh tests/cli/limits.sh
EXTRA_DIST += tests/cli/cost.sh tests/cli/model.sh tests/cli/propose.sh tests/cli/man_examples.sh tests/cli/security.sh tests/cli/limits.sh
TESTS += tests/cli/live_kl.sh
EXTRA_DIST += tests/cli/live_kl.sh
TESTS += tests/cli/bad_inputs.sh
EXTRA_DIST += tests/cli/bad_inputs.sh tests/cli/bad-inputs.md
# No circle of calls of more than two files in cli/ or runs/.
TESTS += tests/cli/circles.sh
EXTRA_DIST += tests/cli/circles.sh
# The catalogues of bad inputs by class, each run by tests/cli/bad_inputs.sh.
TESTS += tests/cli/bad_limits.sh tests/cli/bad_values.sh tests/cli/bad_archives.sh
TESTS += tests/cli/bad_links.sh
EXTRA_DIST += tests/cli/bad_archives.sh tests/cli/bad-archives.md
EXTRA_DIST += tests/cli/bad_links.sh tests/cli/bad-links.md
EXTRA_DIST += tests/cli/bad_limits.sh tests/cli/bad-limits.md
EXTRA_DIST += tests/cli/bad_values.sh tests/cli/bad-values.md
TESTS += tests/cli/signals.sh
EXTRA_DIST += tests/cli/signals.sh
TESTS += tests/cli/newuser.sh
EXTRA_DIST += tests/cli/newuser.sh
