import fs from 'node:fs';
import path from 'node:path';
import express, { Router } from 'express';
import { sendProblem } from '../http/problem';

/**
 * Where Vite writes the console (`npm run build:console`): dist/console at the repository root,
 * reached from src/console (tsx, jest) or dist/src/console (the compiled service).
 */
const defaultDir = () => {
  const fromSource = path.resolve(__dirname, '../../dist/console');
  const fromBuild = path.resolve(__dirname, '../../console');
  // From dist/src/console, ../../console is the build; from src/console it is the sources.
  return fs.existsSync(path.join(fromSource, 'index.html')) || !fs.existsSync(path.join(fromBuild, 'assets'))
    ? fromSource
    : fromBuild;
};

/**
 * The web console at `/`: index.html never cached (it names the current bundle), the hashed
 * bundle under /assets cached for a year. Without a build, `/` says how to make one.
 */
export const consoleRoutes = (dir: string = defaultDir()): Router => {
  const router = Router();
  const index = path.join(dir, 'index.html');
  router.get(['/', '/index.html'], (_req, res) => {
    fs.readFile(index, (error, html) => {
      if (error) {
        sendProblem(
          res,
          503,
          'Console not built',
          'The web console has not been built: run `npm run build` (or `npm run build:console`) and reload.',
        );
        return;
      }
      res.set('Cache-Control', 'no-cache').type('html').send(html);
    });
  });
  router.use(
    '/assets',
    express.static(path.join(dir, 'assets'), {
      immutable: true,
      maxAge: '365d',
      index: false,
      redirect: false,
      fallthrough: true,
    }),
  );
  return router;
};
