#include "CXMPPShims.h"
#include <netinet/in.h>
#include <arpa/nameser.h>
#include <resolv.h>

long CXMPPShims_SSL_set_tlsext_host_name(SSL *ssl, const char *name) {
    return SSL_set_tlsext_host_name(ssl, name);
}

long CXMPPShims_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version) {
    return SSL_CTX_set_min_proto_version(ctx, version);
}

long CXMPPShims_SSL_CTX_set_mode(SSL_CTX *ctx, long mode) {
    return SSL_CTX_set_mode(ctx, mode);
}

long CXMPPShims_BIO_set_mem_eof_return(BIO *bio, long value) {
    return BIO_set_mem_eof_return(bio, value);
}

int CXMPPShims_TLS1_2_VERSION(void) {
    return TLS1_2_VERSION;
}

long CXMPPShims_SSL_default_modes(void) {
    return SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS;
}

unsigned long long CXMPPShims_SSL_OP_NO_RENEGOTIATION(void) {
    return SSL_OP_NO_RENEGOTIATION;
}

int CXMPPShims_res_query(const char *dname, int klass, int type, unsigned char *answer, int anslen) {
    return res_query(dname, klass, type, answer, anslen);
}
