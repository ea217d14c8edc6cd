export const VERSION = '0.1.0';

/**
 * The version of the API the OpenAPI document describes (its info.version), not of the package: it changes when the
 * described API changes, in semver terms, whatever release ships it.
 */
export const API_DESCRIPTION_VERSION = '1.0.0';
