#include "CXMLBaseline.h"
#include <string.h>
#include <libxml/parser.h>

static void on_start(void *ctx, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri,
                     int nb_namespaces, const xmlChar **namespaces, int nb_attributes, int nb_defaulted,
                     const xmlChar **attributes) {
    (*(long *)ctx)++;
}

static void on_end(void *ctx, const xmlChar *localname, const xmlChar *prefix, const xmlChar *uri) {}

static void on_characters(void *ctx, const xmlChar *ch, int len) {}

long cxmlbaseline_parse(const char *bytes, size_t length, size_t chunk) {
    xmlSAXHandler handler;
    memset(&handler, 0, sizeof handler);
    handler.initialized = XML_SAX2_MAGIC;
    handler.startElementNs = on_start;
    handler.endElementNs = on_end;
    handler.characters = on_characters;
    long count = 0;
    xmlParserCtxtPtr ctxt = xmlCreatePushParserCtxt(&handler, &count, NULL, 0, NULL);
    if (ctxt == NULL) return -1;
    xmlCtxtUseOptions(ctxt, XML_PARSE_NONET | XML_PARSE_IGNORE_ENC | XML_PARSE_NOCDATA);
    long result = count;
    for (size_t offset = 0; offset < length; offset += chunk) {
        size_t n = length - offset < chunk ? length - offset : chunk;
        if (xmlParseChunk(ctxt, bytes + offset, (int)n, 0) != 0) { result = -1; break; }
    }
    if (result != -1) result = count;
    xmlFreeParserCtxt(ctxt);
    return result;
}
