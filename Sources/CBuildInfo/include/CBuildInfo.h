#ifndef XMPP_BRIDGE_C_BUILD_INFO_H
#define XMPP_BRIDGE_C_BUILD_INFO_H

/// The commit the binary was built from (`git describe`), as the build was told
/// (`-Xcc -DXMPP_BRIDGE_COMMIT="..."`, scripts/build-release.sh and scripts/package.sh);
/// "unknown" for a build that was not.
const char *xmpp_bridge_build_commit(void);

#endif
