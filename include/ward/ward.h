/*
 * ward — umbrella header for libward.
 */
#ifndef WARD_WARD_H
#define WARD_WARD_H

#include "classify.h"
#include "common.h"
#include "exec.h"
#include "fsfence.h"
#include "mode.h"
#include "policy.h"
#include "profile.h"
#include "provider.h"
#include "roots.h"
#include "rules.h"
#include "runner.h"

#endif
