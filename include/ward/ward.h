/*
 * ward — umbrella header for libward.
 */
#ifndef WARD_WARD_H
#define WARD_WARD_H

#include "call.h"
#include "classify.h"
#include "common.h"
#include "config.h"
#include "env.h"
#include "escalation.h"
#include "exec.h"
#include "fsfence.h"
#include "mode.h"
#include "network.h"
#include "notice.h"
#include "plan.h"
#include "policy.h"
#include "presets.h"
#include "profile.h"
#include "quarantine.h"
#include "provider.h"
#include "render.h"
#include "roots.h"
#include "rules.h"
#include "runner.h"
#include "session.h"
#include "translate.h"
#include "tty.h"

#endif
