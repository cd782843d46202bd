import packageJson from '../../package.json';

/** This service's version, as MindsDB clients read it (status, model rows, @@version). */
export const VERSION: string = packageJson.version;
