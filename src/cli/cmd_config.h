/*
 * ward config — inspect ward.yml: `ward config check [--json]` validates
 * every layer and prints the effective configuration, where each value came
 * from, the access rules as each runner applies them, and every warning.
 * See man/ward-config.5.
 */
#ifndef WARD_CLI_CMD_CONFIG_H
#define WARD_CLI_CMD_CONFIG_H

/* Exit statuses of `ward config check` besides 2 (usage) and 125. */
enum cmd_config_exit {
	CMD_CONFIG_EXIT_VALID = 0,
	CMD_CONFIG_EXIT_INVALID = 1, /* the configuration has errors */
};

/* `ward config SUBCOMMAND [OPTIONS]`; argv[0] is "config". */
int cmd_config(int argc, char **argv);

#endif
