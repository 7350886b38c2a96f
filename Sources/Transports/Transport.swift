// Transports: filled by the bridge-core issue.
