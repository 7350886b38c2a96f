import CLibOMEMO

/// A libomemo-c context (the Signal protocol under OMEMO, XEP-0384 v0.3): the crypto it
/// uses (``OMEMOCryptoProvider``, on OpenSSL). This file owns the `signal_context`; one
/// OMEMO device uses one, from one isolation domain at a time (libomemo-c's locking
/// callbacks are not installed).
final class SignalContext {
    let pointer: OpaquePointer

    init() throws(OMEMOError) {
        var context: OpaquePointer?
        let created = signal_context_create(&context, nil)
        guard created == 0, let context else { throw OMEMOError("create the libomemo-c context", code: created) }
        var provider = OMEMOCryptoProvider.table
        let installed = signal_context_set_crypto_provider(context, &provider)
        guard installed == 0 else {
            signal_context_destroy(context)
            throw OMEMOError("install the crypto provider", code: installed)
        }
        self.pointer = context
    }

    deinit {
        signal_context_destroy(self.pointer)
    }
}
