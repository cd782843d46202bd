import { CARD } from '../../src/a2a/routes';
import { CARD as SDK_CARD } from '../../src/a2a/stacks';

describe('the A2A routes, which load the SDK on the first request to an agent', () => {
  it('when they tell a card request from others before loading it, then they name the path the SDK serves cards at', () => {
    expect(CARD).toBe(SDK_CARD);
  });
});
