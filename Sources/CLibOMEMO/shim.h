#ifndef XMPP_BRIDGE_CLIBOMEMO_SHIM_H
#define XMPP_BRIDGE_CLIBOMEMO_SHIM_H
// libomemo-c (Debian libomemo-c-dev): the Signal protocol as OMEMO uses it. Its headers
// live in include/omemo, which pkg-config puts on the include path.
#include <signal_protocol.h>
#include <key_helper.h>
#include <curve.h>
#include <ratchet.h>
#include <protocol.h>
#include <session_pre_key.h>
#include <session_builder.h>
#include <session_cipher.h>
#endif
