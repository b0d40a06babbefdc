// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The definitions of softhca's trace events (trace.h). */

#define CREATE_TRACE_POINTS
#include "trace.h"
