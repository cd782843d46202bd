import { removeScratch } from './tmpfs';

export default removeScratch;
