/*
 * ward — background tasks: a confined child whose output a reader thread
 * drains into bounded buffers, so the task never blocks on a full pipe.
 *
 * The reader thread also spawns the child. PR_SET_PDEATHSIG fires when the
 * *thread* that spawned exits, not the process; spawning from the thread
 * that lives exactly as long as the task means a task survives the thread
 * that started it, and still dies with the process.
 *
 * With containment (ward_exec_options.contain), the reader thread also
 * kills what the task left behind once its leader has exited, and removes
 * the task's cgroup: the spawn loop and ward_spawn_close do it, as for a
 * blocking call.
 *
 * Locking: task->lock guards the capture buffers (appended by the reader
 * thread), the reaped flag (so ward_task_kill never signals a reused pid)
 * and the start/done handshake.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "exec_internal.h"
#include "libward/guard/guard.h"
#include "libward/policy/protect.h"
#include "libward/runners/runners.h"

/* Default capture bound of a task (per stream). */
#define TASK_CAPTURE_DEFAULT (1024 * 1024)
/* The reader thread needs little stack: one 64 KiB read buffer. */
#define TASK_STACK (512 * 1024)

struct ward_task {
	pthread_t thread;
	bool thread_live; /* created and not yet joined */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int wake_fd; /* eventfd: ward_task_free stops the drain */

	/* Start inputs, used by the thread only until start_done. */
	const ward_confined *confined;
	const ward_policy *policy;
	struct ward_exec_options opts;

	bool start_done;
	int start_err;
	char start_detail[1024];
	bool done;

	struct ward_spawn sp;
	/* Protected git paths, checked once the task has ended. */
	struct ward_protect_guard *guard;
	bool guard_failed;
	struct ward_capbuf out_all, err_all; /* the whole (bounded) output */
	struct ward_capbuf out_new, err_new; /* not yet returned by read */
};

/*
 * Where the task's streams go (ward_exec_options.streams): apart, both
 * into stdout's "new" buffer in the order they are read (merged), or
 * stdout straight to its descriptor and stderr copied live (stream).
 */
static void task_sinks(ward_task *t, struct ward_sink *out,
		       struct ward_sink *err)
{
	switch (t->opts.streams) {
	case WARD_TASK_MERGED:
		*out = (struct ward_sink){&t->out_all, &t->out_new, -1};
		*err = (struct ward_sink){&t->err_all, &t->out_new, -1};
		return;
	case WARD_TASK_STREAMED:
		*out = (struct ward_sink){NULL, NULL, -1};
		*err = (struct ward_sink){
		    &t->err_all, NULL,
		    t->opts.stderr_fd >= 0 ? t->opts.stderr_fd : 2};
		return;
	case WARD_TASK_SEPARATE:
		break;
	}
	*out = (struct ward_sink){&t->out_all, &t->out_new, -1};
	*err = (struct ward_sink){&t->err_all, &t->err_new, -1};
}

static void *task_main(void *arg)
{
	ward_task *t = arg;
	struct ward_loop loop;
	int err;

	err = ward_spawn_start(&t->sp, t->confined, t->policy, &t->opts,
			       t->opts.streams != WARD_TASK_STREAMED);
	pthread_mutex_lock(&t->lock);
	t->start_err = err;
	if (err)
		snprintf(t->start_detail, sizeof(t->start_detail), "%s",
			 ward_error_last());
	t->start_done = true;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
	if (err)
		return NULL;

	memset(&loop, 0, sizeof(loop));
	task_sinks(t, &loop.out, &loop.err);
	loop.lock = &t->lock;
	loop.wake_fd = t->wake_fd;
	loop.timeout_ms = t->opts.timeout_ms;
	loop.kill_grace_ms = t->opts.kill_grace_ms;
	ward_spawn_loop(&t->sp, &loop);
	ward_spawn_close(&t->sp);

	pthread_mutex_lock(&t->lock);
	t->guard_failed = ward_exec_guard_report(
	    t->guard, &t->err_all, loop.err.pending, loop.err.tee_fd);
	t->guard = NULL;
	t->done = true;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
	return NULL;
}

/* Free a task whose thread is not running (never started or joined). */
static void task_destroy(ward_task *t)
{
	ward_protect_guard_free(t->guard);
	ward_capbuf_free(&t->out_all);
	ward_capbuf_free(&t->err_all);
	ward_capbuf_free(&t->out_new);
	ward_capbuf_free(&t->err_new);
	if (t->wake_fd >= 0)
		close(t->wake_fd);
	pthread_cond_destroy(&t->cond);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

/*
 * Start the reader thread with every signal blocked, so process-directed
 * signals keep going to the caller's threads (the child unblocks its own).
 */
static int task_thread_start(ward_task *t)
{
	pthread_attr_t attr;
	sigset_t all, old;
	int rc;

	rc = pthread_attr_init(&attr);
	if (rc)
		return -rc;
	pthread_attr_setstacksize(&attr, TASK_STACK);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t->thread, &attr, task_main, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	return -rc;
}

int ward_task_start(ward_task **out, ward_provider *provider,
		    const ward_policy *policy, char *const argv[],
		    const struct ward_exec_options *opts)
{
	ward_confined *c = NULL;
	int err;

	if (!out || !provider || !policy || !argv || !argv[0])
		return ward_err(WARD_EINVAL, "task: invalid argument");
	err = ward_provider_confine(&c, provider, policy, argv);
	if (err)
		return err;
	err = ward_task_start_confined(out, c, policy, opts);
	ward_confined_free(c);
	return err;
}

int ward_task_start_confined(ward_task **out, const ward_confined *c,
			     const ward_policy *policy,
			     const struct ward_exec_options *opts)
{
	pthread_condattr_t cattr;
	ward_task *t;
	size_t limit;
	int err;

	if (!out || !c || !policy)
		return ward_err(WARD_EINVAL, "task: invalid argument");
	t = calloc(1, sizeof(*t));
	if (!t)
		return ward_err(-ENOMEM, "out of memory");
	t->wake_fd = -1;
	pthread_mutex_init(&t->lock, NULL);
	pthread_condattr_init(&cattr);
	pthread_condattr_setclock(&cattr, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cond, &cattr);
	pthread_condattr_destroy(&cattr);

	err = ward_exec_opts_check(&t->opts, opts);
	if (err)
		goto out_destroy_task;
	/* Tasks always capture (a streamed one its stderr's tail). */
	limit = t->opts.capture_limit ? t->opts.capture_limit
				      : TASK_CAPTURE_DEFAULT;
	t->opts.capture_limit = limit;
	if (t->opts.streams == WARD_TASK_STREAMED) {
		ward_capbuf_init(&t->out_all, 0, 0);
		ward_capbuf_init(&t->err_all, 0, STREAM_ERR_TAIL);
	} else {
		ward_capbuf_init(&t->out_all, limit - limit / 2, limit / 2);
		ward_capbuf_init(&t->err_all, limit - limit / 2, limit / 2);
	}
	ward_capbuf_init(&t->out_new, limit - limit / 2, limit / 2);
	ward_capbuf_init(&t->err_new, limit - limit / 2, limit / 2);
	t->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (t->wake_fd < 0) {
		err = ward_err(-errno, "task: eventfd: %s", strerror(errno));
		goto out_destroy_task;
	}

	/* The plan's side effects, then the guard's snapshot (which must
	 * see what ward created as ward's). */
	err = ward_plan_prepare(c->plan);
	if (err)
		goto out_destroy_task;
	err = ward_protect_guard_new_facts(&t->guard, policy, c->plan->facts,
					   ward_plan_runner(c->plan));
	if (err)
		goto out_destroy_task;
	t->confined = c;
	t->policy = policy;
	err = task_thread_start(t);
	if (err) {
		err = ward_err(err, "task: cannot start a thread: %s",
			       strerror(-err));
		goto out_destroy_task;
	}
	t->thread_live = true;

	pthread_mutex_lock(&t->lock);
	while (!t->start_done)
		pthread_cond_wait(&t->cond, &t->lock);
	err = t->start_err;
	pthread_mutex_unlock(&t->lock);
	t->confined = NULL;
	t->policy = NULL;
	if (err) {
		pthread_join(t->thread, NULL);
		t->thread_live = false;
		err = ward_err(err, "%s", t->start_detail);
		goto out_destroy_task;
	}
	*out = t;
	return 0;

out_destroy_task:
	task_destroy(t);
	return err;
}

int ward_task_read(char **out_stdout, size_t *out_stdout_len, char **out_stderr,
		   size_t *out_stderr_len, ward_task *task)
{
	char *o = NULL, *e = NULL;
	size_t olen = 0, elen = 0;
	int err;

	if (!out_stdout || !out_stderr || !task)
		return ward_err(WARD_EINVAL, "task: invalid argument");
	pthread_mutex_lock(&task->lock);
	err = ward_capbuf_dup(&o, &olen, &task->out_new);
	if (!err)
		err = ward_capbuf_dup(&e, &elen, &task->err_new);
	if (!err) {
		ward_capbuf_reset(&task->out_new);
		ward_capbuf_reset(&task->err_new);
	}
	pthread_mutex_unlock(&task->lock);
	if (err) {
		free(o);
		return err;
	}
	*out_stdout = o;
	*out_stderr = e;
	if (out_stdout_len)
		*out_stdout_len = olen;
	if (out_stderr_len)
		*out_stderr_len = elen;
	return 0;
}

int ward_task_read_output(struct ward_task_output *out, ward_task *task)
{
	struct ward_task_output o = {0};
	int err;

	if (!out || !task)
		return ward_err(WARD_EINVAL, "task: invalid argument");
	pthread_mutex_lock(&task->lock);
	/* ward_capbuf_dup puts the head first: what came before the cut. */
	o.out_head = task->out_new.head_len;
	o.out_dropped = task->out_new.dropped;
	o.err_head = task->err_new.head_len;
	o.err_dropped = task->err_new.dropped;
	err = ward_capbuf_dup(&o.out, &o.out_len, &task->out_new);
	if (!err)
		err = ward_capbuf_dup(&o.err, &o.err_len, &task->err_new);
	if (!err) {
		ward_capbuf_reset(&task->out_new);
		ward_capbuf_reset(&task->err_new);
	}
	pthread_mutex_unlock(&task->lock);
	if (err) {
		ward_task_output_clear(&o);
		return err;
	}
	*out = o;
	return 0;
}

void ward_task_output_clear(struct ward_task_output *o)
{
	if (!o)
		return;
	free(o->out);
	free(o->err);
	memset(o, 0, sizeof(*o));
}

void ward_task_bytes(ward_task *task, unsigned long long *out,
		     unsigned long long *err)
{
	const struct ward_capbuf *a, *b;

	if (!task)
		return;
	pthread_mutex_lock(&task->lock);
	a = &task->out_all;
	b = &task->err_all;
	if (out)
		*out =
		    (unsigned long long)a->head_len + a->tail_len + a->dropped;
	if (err)
		*err =
		    (unsigned long long)b->head_len + b->tail_len + b->dropped;
	pthread_mutex_unlock(&task->lock);
}

int ward_task_wait(ward_result **out, ward_task *task, unsigned long timeout_ms)
{
	struct timespec until;
	int err;

	if (!out || !task)
		return ward_err(WARD_EINVAL, "task: invalid argument");
	if (timeout_ms) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += (time_t)(timeout_ms / 1000);
		until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
	}
	pthread_mutex_lock(&task->lock);
	while (!task->done) {
		if (!timeout_ms) {
			pthread_cond_wait(&task->cond, &task->lock);
		} else if (pthread_cond_timedwait(&task->cond, &task->lock,
						  &until) == ETIMEDOUT &&
			   !task->done) {
			pthread_mutex_unlock(&task->lock);
			return ward_err(-ETIMEDOUT, "task %d is still running",
					(int)task->sp.pid);
		}
	}
	/* done: the reader thread no longer touches the task. */
	err = ward_spawn_result(
	    out, &task->sp,
	    task->opts.streams == WARD_TASK_STREAMED ? NULL : &task->out_all,
	    &task->err_all, false);
	if (!err)
		ward_result_set_guard_failed(*out, task->guard_failed);
	pthread_mutex_unlock(&task->lock);
	return err;
}

int ward_task_kill(ward_task *task, int sig)
{
	int err = 0;

	if (!task)
		return ward_err(WARD_EINVAL, "task: invalid argument");
	pthread_mutex_lock(&task->lock);
	if (task->sp.reaped)
		err = ward_err(-ESRCH, "task %d has ended", (int)task->sp.pid);
	else if ((err = ward_spawn_signal(&task->sp, sig)) != 0)
		err = ward_err(err, "cannot signal task %d: %s",
			       (int)task->sp.pid, strerror(-err));
	pthread_mutex_unlock(&task->lock);
	return err;
}

pid_t ward_task_pid(const ward_task *task)
{
	return task ? task->sp.pid : -1;
}

enum ward_mode ward_task_mode(const ward_task *task)
{
	return task ? task->sp.mode : WARD_MODE_READ_ONLY;
}

enum ward_runner ward_task_runner(const ward_task *task)
{
	return task ? task->sp.runner : WARD_RUNNER_NONE;
}

enum ward_enforcement ward_task_enforcement(const ward_task *task)
{
	return task ? task->sp.enforcement : WARD_ENFORCEMENT_NONE;
}

void ward_task_free(ward_task *task)
{
	uint64_t one = 1;

	if (!task)
		return;
	if (task->thread_live) {
		pthread_mutex_lock(&task->lock);
		if (!task->sp.reaped)
			ward_spawn_signal(&task->sp, SIGKILL);
		pthread_mutex_unlock(&task->lock);
		/* Do not wait for stragglers outside the group. */
		if (write(task->wake_fd, &one, sizeof(one)) < 0) {
			/* an eventfd write cannot fail short of overflow */
		}
		pthread_join(task->thread, NULL);
	}
	task_destroy(task);
}
