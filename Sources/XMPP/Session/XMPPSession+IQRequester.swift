/// The session asks entities for the features built on its requests (``HTTPFileUpload``).
extension XMPPSession: IQRequester {}
