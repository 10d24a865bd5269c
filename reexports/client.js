// `sluice/client`, kept for this release: the client is the package @sluice/client (CHANGELOG.md).
export * from '@sluice/client';
