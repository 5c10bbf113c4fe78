// Stand-in for <pthreadpool.h>, used only when it is missing: Debian 12's libxnnpack-dev
// includes it from xnnpack.h without depending on libpthreadpool-dev. xnnpack.h needs only this
// opaque type.
#pragma once

typedef struct pthreadpool* pthreadpool_t;
