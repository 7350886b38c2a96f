#ifndef XMPP_BRIDGE_CXMLBASELINE_H
#define XMPP_BRIDGE_CXMLBASELINE_H
#include <stddef.h>
/// The baseline for the XML stream benchmark: libxml2's SAX2 push parser over `bytes`
/// fed in `chunk`-byte pieces, with callbacks that only count elements (no tree, no
/// strings). Returns the number of start tags seen, or -1 on a parse error.
long cxmlbaseline_parse(const char *bytes, size_t length, size_t chunk);
#endif
