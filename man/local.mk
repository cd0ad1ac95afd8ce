# man/: wzplan(1) and one page per subcommand; their EXAMPLES are run by
# tests/cli/man_examples.sh.
dist_man_MANS += man/wzplan.1 man/wzplan-cost.1 man/wzplan-model.1 man/wzplan-propose.1 man/wzplan-scenario.5
dist_man_MANS += man/wzplan-traffic.1 man/wzplan-traffic.5
dist_man_MANS += man/wzplan-trace.1 man/wzplan-cache-trace.5
dist_man_MANS += man/wzplan-sim.1 man/wzplan-size.1
dist_man_MANS += man/wzplan-archive.1 man/wzplan-verify.1 man/wzplan-plot.1
dist_man_MANS += man/wzplan-codec.1
dist_man_MANS += man/wzplan-sweep.1 man/wzplan-sweep.5
