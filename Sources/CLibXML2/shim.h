#ifndef XMPP_BRIDGE_CLIBXML2_SHIM_H
#define XMPP_BRIDGE_CLIBXML2_SHIM_H
// Debian's libxml2 is built with ICU, and its encoding.h then includes ICU headers
// that clash with the ICU copy inside Swift's Foundation. We never use the ICU
// fields of xmlCharEncodingHandler (only pointers to it), so hide them.
#include <libxml/xmlversion.h>
#undef LIBXML_ICU_ENABLED
#include <libxml/parser.h>
#include <libxml/parserInternals.h>
#include <libxml/SAX2.h>
#include <libxml/xmlerror.h>
#endif
