// `sluice/limiter`, kept for this release: the limiter is the package @sluice/limiter (CHANGELOG.md).
export * from '@sluice/limiter';
