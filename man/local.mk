# man/: wzplan(1) and one page per subcommand; their EXAMPLES are run by
# tests/cli/man_examples.sh.
dist_man_MANS += man/wzplan.1 man/wzplan-cost.1 man/wzplan-propose.1 man/wzplan-scenario.5
