/*
 * ward fs — file operations through the in-process file fence (libward's
 * fsfence): read, write, edit, rm, mv, mkdir, ls, stat. See man/ward-fs.1.
 */
#ifndef WARD_CLI_CMD_FS_H
#define WARD_CLI_CMD_FS_H

/* Exit statuses of `ward fs` besides 0, 2 (usage) and 125 (ward failed). */
enum cmd_fs_exit {
	CMD_FS_EXIT_FAILED = 1, /* the operation failed (not found, …) */
	CMD_FS_EXIT_DENIED = 3, /* the fence refused the operation */
};

/* `ward fs SUBCOMMAND [OPTIONS] ARG…`; argv[0] is "fs". */
int cmd_fs(int argc, char **argv);

#endif
