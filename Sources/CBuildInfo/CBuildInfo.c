#include "CBuildInfo.h"

#ifndef XMPP_BRIDGE_COMMIT
#define XMPP_BRIDGE_COMMIT "unknown"
#endif

const char *xmpp_bridge_build_commit(void) {
    return XMPP_BRIDGE_COMMIT;
}
