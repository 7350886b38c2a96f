import CLibOMEMO

/// A libomemo-c context (the Signal protocol under OMEMO, XEP-0384 v0.3): the crypto it
/// uses (``OMEMOCryptoProvider``, on OpenSSL). This file owns the `signal_context`; one
/// OMEMO device uses one, from one isolation domain at a time (libomemo-c's locking
/// callbacks are not installed).
final class SignalContext {
    let pointer: OpaquePointer
    /// What the crypto callbacks use; kept as long as the context.
    private let provider: OMEMOCryptoProvider

    init() throws(OMEMOError) {
        let provider = try OMEMOCryptoProvider()
        var context: OpaquePointer?
        let created = signal_context_create(&context, nil)
        guard created == 0, let context else { throw OMEMOError("create the libomemo-c context", code: created) }
        var table = provider.table
        let installed = signal_context_set_crypto_provider(context, &table)
        guard installed == 0 else {
            signal_context_destroy(context)
            throw OMEMOError("install the crypto provider", code: installed)
        }
        self.pointer = context
        self.provider = provider
    }

    deinit {
        signal_context_destroy(self.pointer)
    }
}
