// This target exists only because Swift cannot import C macros. Each function
// wraps exactly one macro (or macro-aliased function) and adds no logic.
#ifndef XMPP_BRIDGE_CXMPPSHIMS_H
#define XMPP_BRIDGE_CXMPPSHIMS_H

#include <openssl/ssl.h>
#include <openssl/bio.h>

/// SSL_set_tlsext_host_name (macro over SSL_ctrl): sets SNI.
long CXMPPShims_SSL_set_tlsext_host_name(SSL *ssl, const char *name);
/// SSL_CTX_set_min_proto_version (macro over SSL_CTX_ctrl).
long CXMPPShims_SSL_CTX_set_min_proto_version(SSL_CTX *ctx, int version);
/// SSL_CTX_set_mode (macro over SSL_CTX_ctrl).
long CXMPPShims_SSL_CTX_set_mode(SSL_CTX *ctx, long mode);
/// BIO_set_mem_eof_return (macro over BIO_ctrl).
long CXMPPShims_BIO_set_mem_eof_return(BIO *bio, long value);
/// TLS1_2_VERSION constant, for Swift.
int CXMPPShims_TLS1_2_VERSION(void);
/// SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS.
long CXMPPShims_SSL_default_modes(void);
/// SSL_OP_NO_RENEGOTIATION (defined through the SSL_OP_BIT macro).
unsigned long long CXMPPShims_SSL_OP_NO_RENEGOTIATION(void);
/// res_query (glibc defines it as a macro alias of __res_query).
int CXMPPShims_res_query(const char *dname, int klass, int type, unsigned char *answer, int anslen);

#endif
